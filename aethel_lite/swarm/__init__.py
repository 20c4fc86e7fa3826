"""Specialist swarm and investment-committee memo: every figure traced to its page (the swarm chapter).

>>> from aethel_lite.data.synthetic import make_synthetic
>>> from aethel_lite.swarm import Orchestrator
>>> ds = make_synthetic(300, seed=0)                                    # doctest: +SKIP
>>> orch = Orchestrator.from_dataset(ds).fit(ds.passages)               # doctest: +SKIP
>>> result = orch.run("NRCP IV")                                        # doctest: +SKIP
>>> print(result.memo.markdown)                                         # doctest: +SKIP
"""

from .extract import RuleExtractor
from .findings import (
    FINDING_KEYS,
    Finding,
    find_conflicts,
    read_findings,
    score_conflicts,
    score_facts,
    write_findings,
)
from .generate import GeneratorError, OpenAICompatibleGenerator
from .indexed import index_orchestrator
from .memo import Memo, MemoCheckError, check_memo
from .orchestrator import EVIDENCE, Orchestrator, SwarmResult, Target
from .resolvers import AliasResolver, DocumentResolver
from .specialists import Mandate, Specialist, default_specialists

__all__ = [
    "AliasResolver",
    "DocumentResolver",
    "RuleExtractor",
    "FINDING_KEYS",
    "Finding",
    "find_conflicts",
    "read_findings",
    "score_conflicts",
    "score_facts",
    "write_findings",
    "GeneratorError",
    "OpenAICompatibleGenerator",
    "Memo",
    "MemoCheckError",
    "check_memo",
    "EVIDENCE",
    "Orchestrator",
    "SwarmResult",
    "Target",
    "Mandate",
    "Specialist",
    "default_specialists",
    "index_orchestrator",
]
