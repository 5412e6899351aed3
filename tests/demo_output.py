"""What ``desktop-kb demo`` must print: the sample folder indexed, and both sample questions
answered (not refused), each citing its file and holding its figure. Shared by the checkout's demo
test and the frozen app's."""

from __future__ import annotations

import re

from desktop_kb.cli.demo import QUESTIONS

EXPECTED = ((QUESTIONS[0], "travel-policy.md", "30"), (QUESTIONS[1], "员工手册.md", "500"))


def answer_block(out: str, question: str) -> str:
    start = out.index(f"Q: {question}")
    end = out.find("\nQ: ", start + 1)
    return out[start:end if end > 0 else len(out)]


def assert_demo_output(out: str) -> None:
    m = re.search(r"Knowledge base 'demo': (\d+) added, \d+ updated, \d+ unchanged, (\d+) chunks\.", out)
    assert m and int(m.group(1)) == 3 and int(m.group(2)) > 0, out[:2000]
    for question, file, figure in EXPECTED:
        block = answer_block(out, question)
        result = re.search(r"^A: (.*)$", block, re.M)
        assert result and not result.group(1).startswith("["), block  # answered, not "[refused] …"
        assert figure in result.group(1), block
        assert "Sources:" in block and file in block.split("Sources:")[1], block
