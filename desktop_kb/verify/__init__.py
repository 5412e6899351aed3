"""The answer check: everything that accepts, repairs or withholds an answer after generation.

Owns: the validation of ``[n]`` citations and claims (:mod:`.citations`, :mod:`.support`,
:mod:`.question`, :mod:`.premise`, :mod:`.claim_terms`, :mod:`.binding`, :mod:`.contrast`), the
repairs (:mod:`.repair`), the answer's kind (:mod:`.answer_type`), the answerability and meaning
judge (:mod:`.judge`) or the trained verifier's graded verdicts (:mod:`.verifier`, :mod:`.graded`),
the condition quote (:mod:`.conditions`), the refusal's one reason (:mod:`.refusal`), and the one
post-generation check that ``ask`` and ``eval claims`` both run (:mod:`.answer_check`).
May import: ``backends``/``text`` and the base modules only (no retrieval, no prompts of the
answer model, no knowledge base): it judges an answer from the question, the text and the passages.
"""
