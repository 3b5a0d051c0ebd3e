"""Message content that is either a string or a list of typed parts."""

from __future__ import annotations

from typing import Any

from bonsai.services.importers.jsonread import Loc

TEXT_PARTS = frozenset({"text", "input_text", "output_text"})
IMAGE_PARTS = frozenset({"image_url", "image", "input_image"})


def join_content(content: Any, loc: Loc, path: str, warnings: list[str]) -> tuple[str, int]:
    """The text of ``content`` and how many image parts it carried.

    Text parts are concatenated exactly, with no separator; image parts are
    counted; any other part type is left out with a warning."""
    if content is None:
        return "", 0
    if isinstance(content, str):
        return content, 0
    if not isinstance(content, list):
        raise loc.error(path, "content must be a string, null or a list of parts")
    texts: list[str] = []
    images = 0
    for index, part in enumerate(content):
        part_path = f"{path}[{index}]"
        if isinstance(part, str):
            texts.append(part)
            continue
        if not isinstance(part, dict):
            raise loc.error(part_path, "a content part must be an object or a string")
        kind = part.get("type")
        if kind in TEXT_PARTS:
            text = part.get("text")
            if not isinstance(text, str):
                raise loc.error(f"{part_path}.text", "a text part needs a string 'text'")
            texts.append(text)
        elif kind in IMAGE_PARTS:
            images += 1
        else:
            warnings.append(
                f"{loc.source} at {part_path}: left out a content part of type {kind!r}"
            )
    return "".join(texts), images
