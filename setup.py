"""The one compiled part of bonsai: the repository map's word scanner.

Everything else is in pyproject.toml. The extension is optional: without a C
compiler bonsai installs anyway and ``words.py`` scans in Python (slower; the
repository map logs that it does, once).
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "bonsai.services.repomap._wordscan",
            sources=["server/bonsai/services/repomap/_wordscan.c"],
            extra_compile_args=["-O3", "-std=c11"],
            optional=True,
        )
    ]
)
