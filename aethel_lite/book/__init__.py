"""Book tooling: the notebook runner, reports, reproducibility, claims, the browser check, the Sphinx extension."""
