"""SGLang's native /generate stream as each release writes it (sglang/srt/…, that release's wheel).

`entrypoints/http_server.py` `generate_request` (0.5.11:706-720) sends `data: {json}` per output
and `data: [DONE]`; each output is {"text": the text so far (incremental only with
--incremental-streaming-output, server_args.py:396), "output_ids", "meta_info"}, and meta_info
carries `prompt_tokens`, `completion_tokens` (cumulative) and `finish_reason` (a dict, None until
the end) (`managers/tokenizer_manager.py:1660-1690` in 0.5.11). The spec counts are added to the
last output only (`_calculate_spec_decoding_metrics`, called when the request finished):
- 0.5.4 (`tokenizer_manager.py:1581-1616`): spec_verify_ct, spec_accept_rate (accepted /
  (verify × steps)), spec_accept_length (completion / verify);
- 0.5.10 (`:1902-1943`): spec_accept_token_num, spec_draft_token_num (verify × (D − 1)), spec_verify_ct, …;
- 0.5.11 (`:2076-2120`): spec_accepted_drafts, spec_proposed_drafts (verify × (D − 1)), spec_verify_ct, …;
- 0.4.10 (`:1540`): spec_verify_ct only; 0.5.9 (`:1851-1857`): 0.5.10's names;
- 0.5.23 (`:3138-3172`): spec_num_correct_drafts, spec_num_proposed_drafts (verify × (D − 1)), spec_verify_ct, ….
"""

from __future__ import annotations

import json


def spec_meta(version: str, completion: int, verify: int, accepted: int, draft_tokens: int = 4) -> dict:
    """The spec keys of a finished request's meta_info on `version` (steps = draft_tokens − 1 here)."""
    drafted = verify * (draft_tokens - 1)
    if version in ("0.4.10", "0.5.4"):
        return {
            "spec_verify_ct": verify,
            "spec_accept_rate": accepted / drafted,
            "spec_accept_length": completion / verify,
        }
    names = {
        "0.5.9": ("spec_accept_token_num", "spec_draft_token_num"),
        "0.5.10": ("spec_accept_token_num", "spec_draft_token_num"),
        "0.5.11": ("spec_accepted_drafts", "spec_proposed_drafts"),
    }.get(version, ("spec_num_correct_drafts", "spec_num_proposed_drafts"))
    return {
        "spec_accept_rate": accepted / drafted,
        "spec_accept_length": completion / verify,
        names[0]: accepted,
        names[1]: drafted,
        "spec_verify_ct": verify,
    }


def generate_stream(
    version: str, counts: list[int], verify: int, accepted: int, prompt_tokens: int = 12
) -> bytes:
    """A streamed /generate answer reaching each cumulative token count in `counts`, then [DONE]."""
    lines = []
    for i, count in enumerate(counts):
        last = i == len(counts) - 1
        meta: dict = {
            "id": "7f3c",
            "finish_reason": {"type": "length", "length": count} if last else None,
            "prompt_tokens": prompt_tokens,
            "completion_tokens": count,
            "cached_tokens": 0,
        }
        if last:
            meta.update(spec_meta(version, count, verify, accepted))
        text = "".join(f"t{j} " for j in range(count))  # the text so far
        lines.append(
            f"data: {json.dumps({'text': text, 'output_ids': list(range(count)), 'meta_info': meta})}\n\n"
        )
    lines.append("data: [DONE]\n\n")
    return "".join(lines).encode()
