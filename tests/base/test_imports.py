"""``aethel_lite.imports.import_without``: a package imported with optional parts hidden, in a fresh
interpreter each time (what is in ``sys.modules`` is the point)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap


def _run(code: str, cwd=None) -> list:
    run = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, cwd=cwd, check=False
    )
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout.strip().splitlines()[-1])


def test_bm25s_without_numba_then_numba_as_usual():
    hidden, available, after, again = _run(
        """
        import json, sys
        from aethel_lite.imports import import_without
        bm25s = import_without("bm25s", absent=("numba",))
        hidden = sys.modules.get("numba") is not None
        import numba  # importable again afterwards
        print(json.dumps([hidden, bm25s.NUMBA_AVAILABLE, "numba" in sys.modules,
                          import_without("bm25s", absent=("numba",)) is bm25s]))
        """
    )
    assert (hidden, available, after, again) == (False, False, True, True)


def test_an_already_imported_module_is_not_hidden():
    (available,) = _run(
        """
        import json, numba
        from aethel_lite.imports import import_without
        print(json.dumps([import_without("bm25s", absent=("numba",)).NUMBA_AVAILABLE]))
        """
    )
    assert available is True


def test_a_stub_stands_in_during_the_import_and_the_real_module_loads_on_first_call(tmp_path):
    pkg = tmp_path / "toypkg"
    (pkg / "heavy").mkdir(parents=True)
    (pkg / "__init__.py").write_text("from .heavy.info import info\nVALUE = 7\n")
    (pkg / "heavy" / "__init__.py").write_text("import sys\nsys.HEAVY_LOADED = True\n")
    (pkg / "heavy" / "info.py").write_text("def info(x):\n    return x * 2\n")
    loaded_during, stubs_left, value, called, loaded_after = _run(
        """
        import json, sys
        from aethel_lite.imports import import_without
        toy = import_without("toypkg", stubs={"toypkg.heavy": (), "toypkg.heavy.info": ("info",)})
        during = getattr(sys, "HEAVY_LOADED", False)
        left = [m for m in ("toypkg.heavy", "toypkg.heavy.info") if m in sys.modules]
        print(json.dumps([during, left, toy.VALUE, toy.info(21), getattr(sys, "HEAVY_LOADED", False)]))
        """,
        cwd=tmp_path,
    )
    assert (loaded_during, stubs_left, value) == (False, [], 7)
    assert (called, loaded_after) == (42, True)


def test_a_failed_import_leaves_nothing_hidden(tmp_path):
    (tmp_path / "broken.py").write_text("import numba\nraise RuntimeError('boom')\n")
    (hidden,) = _run(
        """
        import json, sys
        from aethel_lite.imports import import_without
        try:
            import_without("broken", absent=("numba",))
        except ImportError:
            pass
        print(json.dumps(["numba" in sys.modules]))
        """,
        cwd=tmp_path,
    )
    assert hidden is False
