"""spectop's UI-free measurement library: servers, meters, the energy ledger and the sweep.

Nothing in this package may import Textual or Rich (enforced by ruff TID251 and a test).
"""

__version__ = "0.1.0"
