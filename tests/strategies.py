"""The project's tests use the shipped strategies (:mod:`turncheck.testing`) under their old names."""

from turncheck.testing import HOSTILE_TEXT as TEXT
from turncheck.testing import soup, well_formed

__all__ = ["TEXT", "soup", "well_formed"]
