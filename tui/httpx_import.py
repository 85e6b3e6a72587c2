"""httpx without its command-line client (a cost in the middle of the first triage).

`import httpx` imports `httpx._main`, the `httpx` command's module, whenever click, pygments and rich are
installed (rich and pygments come with Textual): ~19 ms of CPU on a 2-core host, nearly half of httpx's
import, for a command stacktop never runs. import_httpx() imports httpx with that module hidden, so httpx
falls back to its stub `main` (which says how to install the command line).
"""

from __future__ import annotations

import sys
import threading
from types import ModuleType

_lock = threading.Lock()
_CLI = "httpx._main"


def import_httpx() -> ModuleType:
    """httpx, imported once without its command-line module (a no-op when httpx is already imported)."""
    with _lock:
        loaded = sys.modules.get("httpx")
        if loaded is not None:
            return loaded
        hidden = _CLI not in sys.modules
        if hidden:
            sys.modules[_CLI] = None  # type: ignore[assignment]  # "from ._main import main" raises ImportError
        try:
            import httpx
        finally:
            if hidden and sys.modules.get(_CLI, ...) is None:
                del sys.modules[_CLI]
        return httpx
