"""Engine-state lines of vLLM and SGLang `/metrics` pages, as each release renders them.

vLLM 0.33.0 (`vllm/v1/metrics/loggers.py`): `vllm:num_requests_waiting_by_reason` (:548-558,
reasons `capacity` and `deferred`, :43-44, `multiprocess_mode="mostrecent"`),
`vllm:engine_sleep_state` (:594-606, one series per `sleep_state`: awake, weights_offloaded,
discard_all), `vllm:kv_cache_usage_perc` (:620-625, a share 0-1), `vllm:num_preemptions` (:739,
a Counter: sample `vllm:num_preemptions_total`); every series carries `engine` and `model_name`.
The DP 2 page here is a multiprocess merge (no `_created`). vLLM 0.11.0: the KV gauge has no
multiprocess_mode, so one copy per API server with `pid` (0 until that server saw a step).
vLLM 0.6.6 (`vllm/engine/metrics.py:83`, :106): `vllm:gpu_cache_usage_perc`,
`vllm:num_preemptions_total`, no engine label. SGLang 0.5.23
(`srt/observability/metrics_collector.py`): `sglang:token_usage`, `sglang:spec_num_steps`
(:535-540), `sglang:scheduler_idle_seconds_total` (:1062-1068),
`sglang:inter_token_latency_seconds` (:2050-2055, a histogram: its `_count`).
"""

from __future__ import annotations

M = 'model_name="llama"'


def _lines(*rows: str) -> str:
    return "\n".join(rows) + "\n"


VLLM_033_DP2 = _lines(
    "# TYPE vllm:num_requests_waiting_by_reason gauge",
    f'vllm:num_requests_waiting_by_reason{{engine="0",{M},reason="capacity"}} 3.0',
    f'vllm:num_requests_waiting_by_reason{{engine="0",{M},reason="deferred"}} 1.0',
    f'vllm:num_requests_waiting_by_reason{{engine="1",{M},reason="capacity"}} 2.0',
    f'vllm:num_requests_waiting_by_reason{{engine="1",{M},reason="deferred"}} 0.0',
    "# TYPE vllm:engine_sleep_state gauge",
    f'vllm:engine_sleep_state{{engine="0",{M},sleep_state="awake"}} 1.0',
    f'vllm:engine_sleep_state{{engine="0",{M},sleep_state="weights_offloaded"}} 0.0',
    f'vllm:engine_sleep_state{{engine="0",{M},sleep_state="discard_all"}} 0.0',
    f'vllm:engine_sleep_state{{engine="1",{M},sleep_state="awake"}} 0.0',
    f'vllm:engine_sleep_state{{engine="1",{M},sleep_state="weights_offloaded"}} 1.0',
    f'vllm:engine_sleep_state{{engine="1",{M},sleep_state="discard_all"}} 0.0',
    "# TYPE vllm:kv_cache_usage_perc gauge",
    f'vllm:kv_cache_usage_perc{{engine="0",{M}}} 0.5',
    f'vllm:kv_cache_usage_perc{{engine="1",{M}}} 0.25',
    "# TYPE vllm:num_preemptions counter",
    f'vllm:num_preemptions_total{{engine="0",{M}}} 4.0',
    f'vllm:num_preemptions_total{{engine="1",{M}}} 3.0',
)
# by hand: capacity 3 + 2 = 5, deferred 1 + 0 = 1; KV (0.5 + 0.25) / 2; engine 1 asleep; 4 + 3 preempted

VLLM_011_PID_COPIES = _lines(
    "# TYPE vllm:kv_cache_usage_perc gauge",
    f'vllm:kv_cache_usage_perc{{engine="0",{M},pid="101"}} 0.0',
    f'vllm:kv_cache_usage_perc{{engine="0",{M},pid="102"}} 0.6',
    f'vllm:kv_cache_usage_perc{{engine="1",{M},pid="101"}} 0.2',
    f'vllm:kv_cache_usage_perc{{engine="1",{M},pid="102"}} 0.2',
)
# by hand: engine 0 is 0.6 (pid 101 had not seen a step), engine 1 0.2: mean 0.4

VLLM_066 = _lines(
    "# TYPE vllm:gpu_cache_usage_perc gauge",
    f"vllm:gpu_cache_usage_perc{{{M}}} 0.125",
    "# TYPE vllm:num_preemptions_total counter",
    f"vllm:num_preemptions_total{{{M}}} 2.0",
)

S = 'model_name="llama",engine_type="unified",tp_rank="0",pp_rank="0",dp_rank="0"'
SGLANG_0523 = _lines(
    "# TYPE sglang:token_usage gauge",
    f"sglang:token_usage{{{S}}} 0.3",
    "# TYPE sglang:spec_num_steps gauge",
    f"sglang:spec_num_steps{{{S}}} 3.0",
    "# TYPE sglang:scheduler_idle_seconds_total counter",
    f"sglang:scheduler_idle_seconds_total{{{S}}} 12.5",
    "# TYPE sglang:inter_token_latency_seconds histogram",
    f'sglang:inter_token_latency_seconds_bucket{{{M},le="+Inf"}} 840.0',
    f"sglang:inter_token_latency_seconds_count{{{M}}} 840.0",
    f"sglang:inter_token_latency_seconds_sum{{{M}}} 16.8",
)
