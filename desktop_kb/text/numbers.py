"""Numbers in text, normalised so a claim's figures can be compared with a passage's.

:func:`quantities` finds every number with its unit: Arabic digits (full-width forms, thousands
separators, decimals), multipliers (thousand/million/billion, 千/万/亿), percentages (``30%``,
``30 percent``, 百分之三十), English number words (two … ninety) and Chinese numerals (十五, 两千,
三十五万, 一九八五年). A quantity has a set of candidate values (``2.5 million`` is both 2.5 and
2,500,000, so either spelling in a passage matches it) and a canonical unit (``day``, ``year``,
``percent``, ``cny``…, or ``""``).

Chinese numerals are only read when a unit or a marker (第, 百分之, 约…) makes them a number, so
words such as 一些, 统一 or 十分 are not numbers; a lone 一/one is never a figure worth checking.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

__all__ = ["Quantity", "quantities", "same_value", "zh_value"]

_UNITS = {
    "day": "day", "days": "day", "天": "day", "日": "day",
    "week": "week", "weeks": "week", "周": "week", "星期": "week",
    "month": "month", "months": "month", "个月": "month", "月": "month",
    "year": "year", "years": "year", "年": "year",
    "hour": "hour", "hours": "hour", "小时": "hour",
    "minute": "minute", "minutes": "minute", "分钟": "minute",
    "second": "second", "seconds": "second", "秒": "second",
    "km": "km", "kilometre": "km", "kilometres": "km", "kilometer": "km", "kilometers": "km", "公里": "km",
    "mile": "mile", "miles": "mile", "英里": "mile",
    "m": "m", "metre": "m", "metres": "m", "meter": "m", "meters": "m", "米": "m",
    "kg": "kg", "kilogram": "kg", "kilograms": "kg", "公斤": "kg", "千克": "kg",
    "percent": "percent", "per cent": "percent", "percentage points": "percent", "%": "percent",
    "dollar": "usd", "dollars": "usd", "usd": "usd", "美元": "usd",
    "yuan": "cny", "rmb": "cny", "元": "cny", "人民币": "cny",
    "euro": "eur", "euros": "eur", "欧元": "eur",
    "people": "person", "persons": "person", "人": "person",
}
_CURRENCY_PREFIX = {"$": "usd", "us$": "usd", "¥": "cny", "€": "eur", "£": "gbp"}
_EN_MULT = {"thousand": 1e3, "million": 1e6, "billion": 1e9, "trillion": 1e12}
_ZH_MULT = {"千": 1e3, "万": 1e4, "亿": 1e8, "百万": 1e6, "千万": 1e7}
_EN_WORDS = {
    "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10,
    "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16,
    "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40,
    "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90, "hundred": 100,
    "dozen": 12, "twice": 2, "thrice": 3,
}
_ZH_DIGIT = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
_ZH_POS = {"十": 10, "百": 100, "千": 1000}
_ZH_BIG = {"万": 10_000, "亿": 100_000_000}

_UNIT_ALT = "|".join(sorted((re.escape(u) for u in _UNITS if not u.isascii()), key=len, reverse=True))
_EN_UNIT_ALT = "|".join(sorted((re.escape(u) for u in _UNITS if u.isascii()), key=len, reverse=True))
_ARABIC = re.compile(
    r"(?P<cur>us\$|[$¥€£])?\s?"
    r"(?<![A-Za-z0-9_.])(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)(?:st|nd|rd|th)?"
    r"(?:\s?(?P<mult>thousand|million|billion|trillion|百万|千万|万|亿|千)(?![a-z]))?"
    rf"(?:[\s-]?(?P<unit>{_EN_UNIT_ALT})(?![a-z])|\s?(?P<zunit>{_UNIT_ALT}))?",
    re.IGNORECASE,
)
_ZH_NUM = re.compile(
    r"(?P<pre>第|百分之|约|共|达|近|逾|超过|仅)?(?P<num>[零〇一二两三四五六七八九十百千万亿]{1,12})"
    rf"(?P<unit>{_UNIT_ALT}|个|倍|次|名|位|家|条|项|种|届|期|章|节|部|本|所|座|只|头|辆|场|岁|号|年代|世纪|多)?"
)
_EN_ONES = ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
_EN_NUM = re.compile(
    r"\b(?P<num>(?:twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)-(?:" + "|".join(_EN_ONES) + ")|"
    + "|".join(_EN_WORDS) + rf")\b(?:[\s-]+(?P<unit>{_EN_UNIT_ALT})\b)?", re.I)
_ZH_IDIOMS = ("一些", "一起", "一般", "一样", "一直", "一定", "统一", "唯一", "十分", "万一", "千万", "一致",
              "一切", "一旦", "一向", "一度", "一方面", "三角", "七八糟", "百姓", "万物", "一同", "之一")


@dataclass(frozen=True)
class Quantity:
    text: str  # as written
    values: frozenset[float]
    unit: str  # canonical unit or ""
    start: int
    end: int

    @property
    def percent(self) -> bool:
        return self.unit == "percent"


def same_value(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))


def zh_value(s: str) -> float | None:
    """十五 → 15, 两千 → 2000, 三十五万 → 350000, 一九八五 → 1985 (digit by digit)."""
    if not any(c in _ZH_POS or c in _ZH_BIG for c in s):
        if all(c in _ZH_DIGIT for c in s):
            return float("".join(str(_ZH_DIGIT[c]) for c in s))
        return None
    total = section = 0.0
    digit: int | None = None
    for c in s:
        if c in _ZH_DIGIT:
            digit = _ZH_DIGIT[c]
        elif c in _ZH_POS:
            section += (1 if digit is None else digit) * _ZH_POS[c]
            digit = None
        else:  # 万 or 亿
            section += digit or 0
            total = (total + section) * _ZH_BIG[c] if c == "亿" else total + section * _ZH_BIG[c]
            section, digit = 0.0, None
    return total + section + (digit or 0)


def _unit(raw: str | None) -> str:
    return _UNITS.get((raw or "").lower().strip(), "") if raw else ""


def quantities(text: str) -> list[Quantity]:
    """Every number in ``text`` (see the module docstring), in order, overlaps removed."""
    text = unicodedata.normalize("NFKC", text)
    found: list[Quantity] = []
    taken: list[tuple[int, int]] = []

    def add(q: Quantity) -> None:
        if any(q.start < e and s < q.end for s, e in taken):
            return
        taken.append((q.start, q.end))
        found.append(q)

    for m in _ARABIC.finditer(text):
        raw = m.group("num")
        value = float(raw.replace(",", ""))
        values = {value}
        mult = m.group("mult")
        if mult:
            values.add(value * (_EN_MULT.get(mult.lower()) or _ZH_MULT[mult]))
        unit = _unit(m.group("unit") or m.group("zunit"))
        if m.group("cur"):
            unit = _CURRENCY_PREFIX.get(m.group("cur").lower(), unit)
        add(Quantity(m.group(0).strip(), frozenset(values), unit, m.start("num"), m.end()))
    for m in _ZH_NUM.finditer(text):
        s = m.group("num")
        bare = not m.group("pre") and not m.group("unit")
        if bare and (len(s) < 2 or not any(c in _ZH_POS or c in _ZH_BIG for c in s) or s in _ZH_IDIOMS):
            continue  # bare numeral characters: too often part of a word
        if any(idiom in text[max(0, m.start() - 2): m.end() + 2] for idiom in _ZH_IDIOMS) and len(s) == 1:
            continue
        value = zh_value(s) if s not in ("百", "千", "万", "亿") else None
        if value is None or (value == 1 and len(s) == 1 and m.group("pre") != "第" and _unit(m.group("unit")) == ""):
            continue
        unit = "percent" if m.group("pre") == "百分之" else _unit(m.group("unit"))
        add(Quantity(m.group(0), frozenset({value}), unit, m.start("num"), m.end()))
    for m in _EN_NUM.finditer(text):
        word = m.group("num").lower()
        tens, _, ones = word.partition("-")
        value = _EN_WORDS[tens] + (_EN_ONES.index(ones) + 1 if ones else 0)
        add(Quantity(m.group(0), frozenset({float(value)}), _unit(m.group("unit")), m.start(), m.end()))
    found.sort(key=lambda q: q.start)
    return found
