"""Qlik Replicate `changeMask` and `columnMask`: hex strings naming columns by their ordinal.

The whole string is one unsigned integer (`int(mask, 16)`); the column whose metadata `ordinal`
is k (1-based) is bit k-1, counted from the least significant end. So `0B` and `000B` both name
ordinals 1, 2 and 4, and `008080` names ordinals 8 and 16. Qlik's docs call this "little-endian
order" of a bitmask: ordinal 1 is the lowest bit of the last hex digit. What the masks mean for a
change is in docs/message-formats.md#qlik-masks.

A mask may be null: full-load (REFRESH) records carry `changeMask` and `columnMask` as null, which
means no mask was sent, not that no bit is set. `decode_mask` keeps the two apart (None versus an
empty set); what a missing mask means is the caller's to say, and for both masks it is "all
columns" (every column was captured, every column of a new row was set).
"""

import re
from collections.abc import Mapping

from udfs.reasons import Reason, RecordError

_HEX = re.compile(r"[0-9A-Fa-f]+")
"""Only ASCII hex digits: `int(text, 16)` alone would also take `0x`, `_`, signs, spaces and
non-ASCII digits, none of which Qlik writes."""


def decode_mask(mask: str | None) -> frozenset[int] | None:
    """The 1-based ordinals whose bit is set: `decode_mask("0B")` → {1, 2, 4}.

    None for a null or empty mask (no mask sent; see the module docstring); an empty set for a
    mask with no bit set (`"00"`: an UPDATE that changed no column). Anything but hex digits
    raises `RecordError(INVALID_VALUE)`.
    """
    value = _mask_value(mask)
    if value is None:
        return None
    # bin() lists the bits most significant first; reversed, index i is bit i, ordinal i + 1.
    return frozenset(index + 1 for index, bit in enumerate(reversed(bin(value)[2:])) if bit == "1")


def columns_for_mask(mask: str | None, ordinal_to_column: Mapping[int, str]) -> tuple[tuple[str, ...], int]:
    """The columns a mask names, in ordinal order, and the number of set bits with no column.

    A set bit that no column of the metadata owns is counted, never an error (some UPDATEs carry
    a changeMask bit one past the last column). A null or empty mask names every column.
    """
    value = _mask_value(mask)
    ordinals = sorted(ordinal_to_column)
    if value is None:
        return tuple(ordinal_to_column[ordinal] for ordinal in ordinals), 0
    named = tuple(ordinal_to_column[ordinal] for ordinal in ordinals if ordinal >= 1 and (value >> (ordinal - 1)) & 1)
    # Ordinals are unique, so each named column owns one set bit. (Counting without building a
    # mask of the known bits: `1 << (ordinal - 1)` of a metadata message's ordinal 10**12 would
    # need 125 GB; shifting right by it is free.)
    return named, value.bit_count() - len(named)


def _mask_value(mask: str | None) -> int | None:
    if mask is None or mask == "":
        return None
    if not isinstance(mask, str) or not _HEX.fullmatch(mask):
        raise RecordError(Reason.INVALID_VALUE, f"mask {mask!r:.80} is not a hex string")
    return int(mask, 16)
