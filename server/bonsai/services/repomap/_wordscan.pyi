def source_stems(source: bytes, stop: frozenset[str], min_len: int, max_len: int, /) -> set[str]:
    """The distinct stemmed words of ``source`` (``words._python_source_stems``)."""
