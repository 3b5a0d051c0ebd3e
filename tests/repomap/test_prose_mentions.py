"""Issue texts that describe behaviour without naming code: their plain words
reach the definitions whose names contain them."""

from __future__ import annotations

from pathlib import Path

from repomap_helpers import ServiceFactory

from bonsai.services.repomap.mentions import (
    PART_MAX_IDENTS,
    WordParts,
    build_path_index,
    name_parts,
    parse_mentions,
    prose_idents,
)

NAMES = ["HTTPConnection", "get_default_browser", "BaseBrowser", "open", "parse_header_value"]


def test_names_split_into_lower_case_parts() -> None:
    assert name_parts("HTTPConnection") == {"http", "connection"}
    assert name_parts("get_default_browser") == {"default", "browser"}  # "get": too short
    assert name_parts("MAX_LINE_SIZE") == {"line", "size"}


def test_plain_words_spread_over_the_names_containing_them() -> None:
    parts = WordParts(NAMES)
    found = prose_idents("The default browsers are not used", parts, set(NAMES))
    # "browsers" (plural) names two definitions, "default" one
    assert found == {"BaseBrowser": 0.5, "get_default_browser": 1.5}
    assert prose_idents("The connection drops", parts, {"open"}) == {}  # not defined


def test_a_word_shared_by_many_names_says_nothing() -> None:
    names = [f"handler_{k}_value" for k in range(PART_MAX_IDENTS + 1)] + ["value_parser"]
    found = prose_idents("the handler parser fails", WordParts(names), set(names))
    assert found == {"value_parser": 1.0}  # "handler" is in too many names


def test_prose_adds_to_the_identifier_weights() -> None:
    parts, defined = WordParts(NAMES), set(NAMES)
    plain = parse_mentions("the browser will not open", build_path_index([]), defined).idents
    prose = parse_mentions("the browser will not open", build_path_index([]), defined, parts)
    assert "BaseBrowser" not in plain
    assert prose.idents["BaseBrowser"] == 0.5
    assert prose.idents["open"] == plain["open"] + 1.0  # its own word weight, plus its part


def test_behaviour_only_text_brings_the_file_into_the_map(
    repo: Path, make_service: ServiceFactory
) -> None:
    service = make_service(repo)
    assert "tools/leaf_utility.py" not in service.get(tokens=200).text
    result = service.get(tokens=200, mentions="The checksum comes out wrong for big inputs.")
    assert "tools/leaf_utility.py:" in result.text
    assert "│def obscure_checksum_routine(data: bytes) -> int:" in result.text


def test_names_added_by_an_edit_are_found_by_their_parts(
    repo: Path, make_service: ServiceFactory
) -> None:
    service = make_service(repo)
    text = "The frobnication totals are off by one."
    assert "tools/extra.py" not in service.get(tokens=200, mentions=text).text
    (repo / "tools" / "extra.py").write_text("def frobnication_totals(rows):\n    return 0\n")
    service.update_paths([repo / "tools" / "extra.py"])
    assert "tools/extra.py:" in service.get(tokens=200, mentions=text).text


def test_a_link_to_a_file_names_it() -> None:
    index = build_path_index(["pkg/handlers/numpy_handler.py", "pkg/numpy_handler.py"])
    text = "See https://github.com/o/r/blob/8da0b9b/pkg/handlers/numpy_handler.py#L46"
    files = parse_mentions(text, index, set()).files
    assert files["pkg/handlers/numpy_handler.py"] == 1.0  # the file the link points at
    assert files["pkg/numpy_handler.py"] == 0.5  # only its stem is named
