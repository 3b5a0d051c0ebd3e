"""Where a new question attaches: the rule on a fixture conversation (pure core)."""

from __future__ import annotations

import pytest

from bonsai.core.history.attach import AttachNode, Vocabulary, candidates, decide, decide_all
from bonsai.core.history.tree import ROOT, TreeOp, apply_op, derive
from bonsai.domain import Message, StoredMessage

# A small project conversation: each exchange introduces its own terms; "project"
# and "tests" come back in several nodes and so are generic here.
CONVERSATION = [
    ("q1", "question", "Set up the project with a pyproject file and a test runner."),
    ("a1", "answer", "Done: pyproject.toml created and pytest configured for the project."),
    ("q2", "question", "Now parse the DICOM headers and expose PixelRepresentation."),
    ("a2", "answer", "Added parse_header in dicom.py; PixelRepresentation comes from (0028,0103)."),
    ("q3", "question", "Add a CLI command that prints the version."),
    ("a3", "answer", "Added a version subcommand to cli.py; it reads the package metadata."),
    ("q4", "question", "Write documentation for the project in the README."),
    ("a4", "answer", "The README now covers install and usage of the project."),
]


def nodes() -> list[AttachNode]:
    out, last_question = [], None
    for node_id, role, text in CONVERSATION:
        if role == "question":
            last_question = node_id
            out.append(AttachNode(node_id, "question", text))
        else:
            out.append(AttachNode(node_id, "answer", text, parent=last_question))
    return out


def vocabulary() -> Vocabulary:
    vocab = Vocabulary()
    for node in nodes():
        vocab.add(node)
    return vocab


def test_a_specific_term_attaches_under_the_answer_that_introduced_it() -> None:
    decision = decide("Why is PixelRepresentation signed for some files?", vocabulary())
    assert decision.target == "a2", decision.reason
    assert decision.term == "pixelrepresentation"
    assert 0.5 < decision.score <= 1.0
    assert "in 2 of 8 earlier nodes" in decision.reason and decision.similarity == "lexical"


def test_a_term_the_user_introduced_is_credited_to_the_answer_that_replied() -> None:
    decision = decide("Does the DICOM parser handle missing headers?", vocabulary())
    assert decision.target == "a2", "DICOM was first said in question q2; a2 answered it"


def test_only_generic_words_start_a_new_branch_under_the_root() -> None:
    decision = decide("What should we do next with the project?", vocabulary())
    assert decision.target is None and decision.score == 0.0
    assert "only generic words" in decision.reason, decision.reason


def test_a_word_in_more_than_a_third_of_the_nodes_is_not_specific() -> None:
    vocab = vocabulary()
    assert vocab.df["project"] == 4 and not vocab.is_specific("project")
    assert vocab.is_specific("cli") and vocab.introducer["cli"] == "a3"


def test_semantic_similarity_decides_between_two_introducing_answers() -> None:
    vocab, question = vocabulary(), "Should the CLI print PixelRepresentation too?"
    assert set(candidates(question, vocab)) == {"a2", "a3"}
    towards_a3 = decide(question, vocab, {"a2": 0.1, "a3": 0.9})
    towards_a2 = decide(question, vocab, {"a2": 0.9, "a3": 0.1})
    assert (towards_a3.target, towards_a2.target) == ("a3", "a2")
    assert towards_a3.similarity == "model2vec" and "0.90 (model2vec)" in towards_a3.reason


def test_the_first_question_starts_the_tree_and_decisions_are_deterministic() -> None:
    first = decide_all(nodes())
    assert first["q1"].target is None and "starts the tree" in first["q1"].reason
    assert first == decide_all(nodes()), "same nodes, same decisions"


# ------------------------------------------------------------- tree ops the rule uses
def stored(*messages: Message) -> list[StoredMessage]:
    return [
        StoredMessage(message_id=f"m{i}", session_id="s", seq=i, created_at=0.0, message=m)
        for i, m in enumerate(messages, 1)
    ]


LOG = stored(
    Message(role="user", content="one"),
    Message(role="assistant", content="answer one"),
    Message(role="user", content="two"),
    Message(role="assistant", content="answer two"),
)


def test_attach_moves_a_question_under_an_answer_or_to_the_root() -> None:
    under = derive(LOG, [TreeOp(kind="attach", node_id="m3", parent_id="m2", after_seq=3)])
    assert under.nodes["m3"].parent == "m2"
    rooted = derive(LOG, [TreeOp(kind="attach", node_id="m3", parent_id=None, after_seq=3)])
    assert rooted.nodes["m3"].parent is None
    assert rooted.active_path() == ["m3", "m4"], "the model sees only the new branch"


def test_fork_at_the_root_starts_the_next_question_on_a_new_branch() -> None:
    tree = derive(LOG, [TreeOp(kind="fork", node_id=ROOT, after_seq=2)])
    assert tree.nodes["m3"].parent is None and tree.fork is None


def test_only_questions_attach() -> None:
    tree = derive(LOG, [])
    with pytest.raises(ValueError, match="only questions attach"):
        apply_op(tree, TreeOp(kind="attach", node_id="m2", parent_id=None, after_seq=4))
