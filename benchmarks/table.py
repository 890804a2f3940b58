"""The benchmarks' tables: rows of text cells in aligned columns, each row also shown as it is measured."""

from __future__ import annotations

import sys


class Table:
    def __init__(self, header: tuple[str, ...] = ("figure", "value", "ratio", "goal", "pass/fail")) -> None:
        self.header = header
        self.rows: list[tuple[str, ...]] = []

    def add(self, figure: str, value: str, ratio: str = "", goal: str = "", ok: bool | None = None) -> None:
        self.add_row(figure, value, ratio, goal, verdict(ok))

    def add_row(self, *cells: str) -> None:
        row = cells + ("",) * (len(self.header) - len(cells))
        self.rows.append(row)
        print(f"  … {row[0]}: {' '.join(filter(None, row[1:3]))}", file=sys.stderr, flush=True)  # progress

    def render(self) -> str:
        widths = [max(len(row[i]) for row in [self.header, *self.rows]) for i in range(len(self.header))]

        def line(row: tuple[str, ...]) -> str:
            return "  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip()

        return "\n".join([line(self.header), line(tuple("-" * w for w in widths)), *map(line, self.rows)])


def verdict(ok: bool | None) -> str:
    return "" if ok is None else ("pass" if ok else "FAIL")


def seconds(value: float) -> str:
    return f"{value * 1000:.1f} ms" if value < 1 else f"{value:.2f} s"
