"""The help screen: every key, and what each figure means."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Markdown

HELP = """\
# spectop

| key | action |
| --- | --- |
| `s` | set up and run a paired plain-versus-draft sweep |
| `c` | cancel the running sweep (completed points stay on disk) |
| `r` | probe: send one streamed request to the server |
| `p` | pause / resume live updates |
| `1` `2` `3` | requests, latency, sweep tab |
| `z` | hide / show the live panels |
| `enter` | on a row of the Requests tab: that request's detail (gap histogram, tokens per step) |
| `ctrl+p` | command palette |
| `?` | this help |
| `q` | quit |

In `spectop replay FILE`: `space` pauses and resumes, `←` `→` seek 5 s, `+` `-` change the speed.

**acceptance** accepted / drafted tokens. **G** tokens committed per verify step (1 + accepted/steps).
**width** positions the target verifies per step (1 + drafted/steps). **S_j** share of steps whose
draft survived to position j.

**mJ/token** window joules over committed tokens (never a mean of per-request ratios); **net**
subtracts the idle power over the window. Per-request mJ/token splits the meter's energy over
spectop's requests running at the time, by the tokens each committed, and gives traffic spectop did
not send its share by the tokens the server counted; `*` after it: the server was busier than
spectop's own requests and did not count its tokens, so that traffic shared the energy shown.

**gaps**: a drafting server sends a verify step as a burst of events microseconds apart, so the
tails (p95, p99, max) are what a reader feels; TTFT is separate.

A draft model passed with `-md` but no `--spec-type draft-simple` is loaded and never used: spectop
says so in red.

Press `escape` to close.
"""


class HelpScreen(ModalScreen[None]):
    BINDINGS = [("escape", "app.pop_screen", "Close"), ("question_mark", "app.pop_screen", "Close")]

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help"):
            yield Markdown(HELP)
