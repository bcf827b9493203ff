"""The committed verdict file: one readable JSON file of verdicts per test item.

The verdict file is the source of truth for replay: sorted, with no timestamps or costs, so that
re-recording an unchanged verdict changes no byte and a review diff shows only what the judge said
differently.  A file may be hand-edited, so it is parsed as JSON and validated before use.

Several processes may record into one file at once: every write re-reads the file and adds its
entry under a cross-process lock (`locks`), so no process's entry is lost.  Processes that do not
share a temp dir (containers sharing only a bind-mounted tree) do not see each other's locks.

What is written is redacted (`redact_entry`): a key-shaped string or a credential from the
environment anywhere in an entry (the case, the judge's reply, a field added later) is stored as
`[redacted]`.  The key was
computed from the real content before, so replay is unaffected.

Beside "verdicts", a file may hold "generations": replies of the model under test recorded by
`generate`, keyed and validated the same way.  The section is written only when it holds
something, so files without generations keep their bytes: the format stays 1.  So may it hold
"unreadable": judge replies that held no verdict, kept where a run counts them rather than failing on
them (a judge's qualification), so that a replay counts them again.  They never answer a judgment, and
a key is stored in at most one of "verdicts" and "unreadable": writing it to one drops it from the other.

Beside them, "outcomes" keeps what each judgment decided (see `outcomes`), for `llmjudge diff`; written with
the judgment's entries, only where it changed, and only when it holds something.

A judgment of several calls (samples, both orders of a pairwise, a claim or a turn each) writes its
entries together (`put_many`: one write), and what they say of the case (`CASE_FIELDS`: the output, the
context, ...) once, in a "cases" section, each entry naming its case by id.  A reader expands them,
so every entry in memory is whole; files written before, with the case in every entry, read the same.

A generation that continues another's conversation (a simulated user's next turn) says so: `follows`
names the earlier one's key and `added` the messages it adds.  It is written without its messages
where the one it follows is in the file and the messages are exactly that one's and the added ones
(`_continued`), so a conversation of n turns takes room in proportion to n, not n squared; a reader
puts the messages back.  Files written before, with every turn's messages whole, read the same.

A file is never written larger than a reader accepts (`MAX_FILE_BYTES`): `VerdictFileTooLarge` says so
before anything is written, and what to do.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import stat
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

from ..errors import StoreError
from ..keys import canonical_json
from ..redact import MIN_SECRET_LENGTH, redact, redact_value, redactor
from .atomic import TEMP_DIR, write_atomically

__all__ = [
    "CASE_FIELDS",
    "MAX_FILE_BYTES",
    "VERDICT_FILE_FORMAT",
    "VerdictDocument",
    "VerdictFile",
    "VerdictFileTooLarge",
    "VerdictFileWriteError",
    "as_written",
    "case_id",
    "redact_entry",
    "verdict_file_path",
    "verdict_filename",
]

# Bump when the prompt template or the stored format changes meaning: every key changes with it.
VERDICT_FILE_FORMAT = 1

_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9_.\-]")
_KEY = re.compile(r"[0-9a-f]{64}")
_CASE_ID = re.compile(r"[0-9a-f]{16}")
# What an entry says of the case it judged, rather than of its call: the fields every entry of one
# judgment shares, stored once per judgment (see `VerdictDocument.write`).
CASE_FIELDS = ("criteria", "input", "expected", "output", "context")
# A file's sections: "verdicts", "generations" and "unreadable" (judge replies that held no verdict)
Section = Literal["verdict", "generation", "unreadable"]
_SECTION_NAMES: dict[Section, str] = {"verdict": "verdicts", "generation": "generations", "unreadable": "unreadable"}
_ENTRY_NOUNS: dict[Section, str] = {
    "verdict": "a verdict",
    "generation": "a generation",
    "unreadable": "an unreadable reply's",
}
# Writing a key to one of these sections drops it from the other (see the module docstring).
_EXCLUSIVE: dict[Section, Section] = {"verdict": "unreadable", "unreadable": "verdict"}


def verdict_filename(test_name: str, clean: Callable[[str], str] | None = None) -> str:
    """A file name for a test (`TestX::test_y[a/b]`), unique even where characters were replaced, and
    with no secret in it (a key used as a parametrize id is redacted; the digest tells such tests apart).
    Only ids can bring a secret in, and ids shorter than `MIN_SECRET_LENGTH` cannot hold one: the
    environment is not read for them.  `clean`: the judgment's own `redactor`."""
    ids = test_name.find("[")
    if ids == -1 or len(test_name) - ids - 2 < MIN_SECRET_LENGTH:
        return _filename(test_name, test_name)
    return _filename(test_name, (clean or redact)(test_name))


@functools.lru_cache(maxsize=4096)
def _filename(test_name: str, shown: str) -> str:
    cleaned = _UNSAFE_NAME.sub("_", shown.replace("::", "."))
    if cleaned != test_name.replace("::", ".") or len(cleaned) > 120:
        digest = hashlib.sha256(test_name.encode("utf-8", "surrogatepass")).hexdigest()[:8]
        cleaned = f"{cleaned[:120]}-{digest}"
    return cleaned + ".json"


def verdict_file_path(module_path: Path, test_name: str, *, store_root: Path | None, rootdir: Path) -> Path:
    """Where one test item's verdicts live: `judge_verdicts/<module>/<test>.json` beside the test module
    (as pytest-recording keeps cassettes), or with `--judge-store DIR` in
    `DIR/<module path relative to rootdir>/<test>.json`."""
    return Path(verdict_file_location(module_path, test_name, store_root=store_root, rootdir=rootdir))


def verdict_file_location(
    module_path: Path,
    test_name: str,
    *,
    store_root: Path | None,
    rootdir: Path,
    clean: Callable[[str], str] | None = None,
) -> str:
    """`verdict_file_path` as a string: what a replay opens, without building a Path per test."""
    name = verdict_filename(test_name, clean)
    if store_root is None:  # pure path arithmetic (no file system); one folder for every test of a module
        return _module_folder(module_path) + name
    try:
        relative = module_path.resolve().relative_to(rootdir.resolve())
    except ValueError:
        relative = Path(module_path.name)
    return os.fspath(store_root.joinpath(relative.with_suffix(""), name))


@functools.lru_cache(maxsize=1024)
def _module_folder(module_path: Path) -> str:
    """The module's verdict folder, with a trailing separator (a file name is appended to it)."""
    return os.path.join(module_path.parent.joinpath("judge_verdicts", module_path.stem), "")


def _validate_entry(path: Path | str, key: str, entry: object, *, what: Section = "verdict") -> dict[str, Any]:
    if not _KEY.fullmatch(key):
        raise StoreError(f"{path}: {key!r} is not {_ENTRY_NOUNS[what]} key (64 hex digits)")
    if not isinstance(entry, dict):
        raise StoreError(f"{path}: the entry for key {key[:12]} is not a JSON object")
    if not isinstance(entry.get("reply"), str):
        raise StoreError(f"{path}: the entry for key {key[:12]} has no 'reply' text")
    return entry


def as_written(section: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """A section as it is written (and compared): None-valued fields dropped."""
    return {k: {f: v for f, v in e.items() if v is not None} for k, e in section.items()}


class _Located:
    """A verdict file known by its location, as given: what is opened.  Its `Path` is made when first
    asked, since a replay opens a file per test and names its path only in an error."""

    __slots__ = ("_path", "location")

    def __init__(self, path: Path | str) -> None:
        self.location = os.fspath(path)
        self._path = path if isinstance(path, Path) else None

    @property
    def path(self) -> Path:
        """The verdict file."""
        if self._path is None:
            self._path = Path(self.location)
        return self._path


class VerdictDocument(_Located):
    """One verdict file as it is on disk: the only code that reads or writes the file format.

    `entries` are the verdicts; `generations` the recorded replies of the model under test; `unreadable`
    the judge replies that held no verdict, kept by a run that counts them (see the module docstring).
    """

    __slots__ = ("_outcomes", "_unchecked", "entries", "generations", "test", "unreadable")

    def __init__(
        self,
        path: Path | str,
        test: str,
        entries: dict[str, dict[str, Any]],
        generations: dict[str, dict[str, Any]] | None = None,
        *,
        outcomes: dict[str, dict[str, Any]] | None = None,
        unreadable: dict[str, dict[str, Any]] | None = None,
    ) -> None:
        super().__init__(path)
        self.test = test
        self.entries = entries
        self.generations = {} if generations is None else generations
        self.unreadable = {} if unreadable is None else unreadable
        self._outcomes = {} if outcomes is None else outcomes
        self._unchecked: object = None  # a file's "outcomes" as read: checked when first asked for

    @property
    def outcomes(self) -> dict[str, dict[str, Any]]:
        """What each judgment decided, by its key (see `store.outcomes`); checked on first use (a replay never
        asks), a StoreError naming what is wrong."""
        if self._unchecked is not None:
            from .outcomes import checked_outcomes

            self._outcomes, self._unchecked = checked_outcomes(self.location, self._unchecked), None
        return self._outcomes

    def __repr__(self) -> str:
        return f"VerdictDocument({self.location!r}, test={self.test!r}, {len(self.entries)} verdicts)"

    @classmethod
    def read(cls, path: Path | str) -> VerdictDocument:
        """Read and validate `path` (a missing file is empty); StoreError names a malformed one."""
        try:
            data = read_regular_file(path)
        except (FileNotFoundError, NotADirectoryError):  # no file can be there: an empty verdict file
            return cls(path, "", {})
        except FileTooLarge as exc:
            raise StoreError(
                f"{path}: refused to read the verdict file: {exc}, the most a verdict file may hold (a guard "
                "against a runaway or hostile file). A test records less than that; if this one recorded it "
                "(with an older version: a simulated conversation stored each turn whole), delete the file and "
                "record it again, and keep the test smaller (fewer or shorter turns, or several tests)"
            ) from None
        except RefusedFile as exc:
            raise StoreError(
                f"{path}: refused to read the verdict file: {exc}; replace it with a regular file"
            ) from None
        except OSError as exc:
            raise StoreError(f"{path}: cannot read the verdict file ({exc.__class__.__name__})") from None
        return cls.parse(path, data)

    @classmethod
    def parse(cls, path: Path | str, data: bytes) -> VerdictDocument:
        """Validate the bytes of a verdict file (read from disk, or a revision's in git) named `path`; the one
        reading of the format.  StoreError names a malformed one."""
        if len(data) > MAX_FILE_BYTES:
            raise StoreError(
                f"{path}: refused to read the verdict file: {len(data)} bytes, over the limit of {MAX_FILE_BYTES}"
            )
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise StoreError(f"{path}: cannot read the verdict file ({exc.__class__.__name__})") from None
        try:
            if text.startswith("\ufeff"):  # as json.loads says it (the decoder alone would not name the BOM)
                raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0)
            data = _DECODER.decode(text)
        except _DuplicateField as exc:
            raise StoreError(
                f"{path}: the field {exc.args[0]!r} appears twice in one object; a verdict file names each field "
                "once (fix it, or delete it and re-record)"
            ) from None
        except RecursionError:  # the C scanner counts its depth: a hostile file ends here, not in a crash
            raise StoreError(f"{path}: the verdict file nests too deeply to be one; delete it and re-record") from None
        except ValueError as exc:
            raise StoreError(
                f"{path}: the verdict file is not valid JSON ({exc}); fix it, or delete it and re-record"
            ) from None
        if not isinstance(data, dict) or not isinstance(data.get("verdicts"), dict):
            raise StoreError(f"{path}: not a verdict file (expected an object with a 'verdicts' object)")
        if data.get("format") != VERDICT_FILE_FORMAT:
            raise StoreError(
                f"{path}: verdict file format {data.get('format')!r}, this plugin reads format {VERDICT_FILE_FORMAT}"
            )
        cases = _read_cases(path, data.get("cases", {}))
        sections: dict[Section, dict[str, dict[str, Any]]] = {}
        for what, name in _SECTION_NAMES.items():
            found = data.get(name, {})  # a file without a section has none of its entries
            if not isinstance(found, dict):
                raise StoreError(f"{path}: {name!r} is not a JSON object")
            sections[what] = {
                key: _expanded(path, key, _validate_entry(path, key, e, what=what), cases) for key, e in found.items()
            }
        document = cls(
            path,
            str(data.get("test") or ""),
            sections["verdict"],
            _with_messages(path, sections["generation"]) if sections["generation"] else {},
            unreadable=sections["unreadable"],
        )
        document._unchecked = data.get("outcomes")  # a file without the section has none
        return document

    def section(self, what: Section) -> dict[str, dict[str, Any]]:
        """The verdicts, the generations, or the unreadable replies."""
        if what == "generation":
            return self.generations
        return self.unreadable if what == "unreadable" else self.entries

    def write(self) -> None:
        """Rewrite atomically in the one layout (sorted, indented), so a diff shows only the change.

        The entries that name a case are written without its fields, and each case once under "cases"."""
        cases: dict[str, dict[str, Any]] = {}
        document: dict[str, Any] = {
            "format": VERDICT_FILE_FORMAT,
            "test": redact(self.test),
            "verdicts": _compacted(as_written(self.entries), cases),
        }
        if self.generations:  # absent when empty: a file without generations keeps its bytes
            document["generations"] = _continued(_compacted(as_written(self.generations), cases))
        if self.unreadable:  # absent when empty, likewise
            document["unreadable"] = _compacted(as_written(self.unreadable), cases)
        if cases:  # absent when none: a file of one-call judgments keeps its bytes
            document["cases"] = cases
        # What each judgment decided, while its entries are here (prune removes both); absent when none.
        outcomes = {key: outcome for key, outcome in self.outcomes.items() if key in self.entries}
        if outcomes:
            document["outcomes"] = outcomes
        text = json.dumps(document, sort_keys=True, indent=2, ensure_ascii=False) + "\n"
        if len(text) * 4 > MAX_FILE_BYTES:  # a character is at most 4 bytes: most files need no count
            size = len(text.encode("utf-8", "surrogatepass"))
            if size > MAX_FILE_BYTES:  # what no reader would accept is never written
                raise VerdictFileTooLarge(self.path, size)
        write_atomically(self.path, text, temp_dir=self.path.parent / TEMP_DIR)


def case_id(case: Mapping[str, Any]) -> str:
    """The id a case is stored under: 16 hex digits of the sha256 of its canonical JSON."""
    return hashlib.sha256(canonical_json(case).encode("utf-8", "surrogatepass")).hexdigest()[:16]


def shared_case(entries: Mapping[str, Mapping[str, Any]]) -> dict[str, Any] | None:
    """The case fields every one of `entries` holds alike (one judgment's entries), or None: fewer than two
    entries, or no case field, or entries that differ in one (they are then stored as they are)."""
    if len(entries) < 2:
        return None
    first, *others = entries.values()
    case = {f: first[f] for f in CASE_FIELDS if f in first}
    if not case or any({f: e[f] for f in CASE_FIELDS if f in e} != case for e in others):
        return None
    return case


def _compacted(section: Mapping[str, dict[str, Any]], cases: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """`section` as written: an entry that names a case loses the case's fields, which go into `cases` once.

    Two different cases under one id (a file merged by hand) are told apart: the later gets its own id."""
    written: dict[str, dict[str, Any]] = {}
    for key, entry in section.items():
        named = entry.get("case")
        if isinstance(named, str):
            entry = dict(entry)
            case = {f: entry.pop(f) for f in CASE_FIELDS if f in entry}
            known = cases.setdefault(named, case)
            if known is not case and known != case:
                named = entry["case"] = case_id(case)
                cases[named] = case
        written[key] = entry
    return written


def _read_cases(path: Path | str, cases: object) -> dict[str, dict[str, Any]]:
    """A file's "cases" section, checked: ids of 16 hex digits, each an object."""
    if not isinstance(cases, dict):
        raise StoreError(f"{path}: 'cases' is not a JSON object")
    for name, case in cases.items():
        if not _CASE_ID.fullmatch(name) or not isinstance(case, dict):
            raise StoreError(f"{path}: the case {name[:20]!r} is not a case (16 hex digits naming a JSON object)")
    return cases


def _expanded(path: Path | str, key: str, entry: dict[str, Any], cases: Mapping[str, Any]) -> dict[str, Any]:
    """`entry` whole: with the fields of the case it names (the case's objects shared, not copied)."""
    named = entry.get("case")
    if named is None:
        return entry
    case = cases.get(named) if isinstance(named, str) else None
    if case is None:
        raise StoreError(f"{path}: the entry for key {key[:12]} names the case {str(named)[:20]!r}, not in the file")
    return {**case, **entry}


def _continued(section: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """`section` as written: a generation that `follows` another in it, with exactly that one's messages and
    its `added` ones, is written without its messages (a reader puts them back: `_with_messages`)."""
    written = dict(section)
    for key, entry in section.items():
        follows, messages, added = entry.get("follows"), entry.get("messages"), entry.get("added")
        earlier = section.get(follows) if isinstance(follows, str) else None
        if earlier is None or not isinstance(messages, list) or not isinstance(added, list):
            continue
        before = earlier.get("messages")
        # Most messages are the very objects of the earlier entry's list (a reader shares them): cheap to compare.
        if isinstance(before, list) and len(messages) == len(before) + len(added) and messages == before + added:
            written[key] = {f: v for f, v in entry.items() if f != "messages"}
    return written


def _rejoin(
    new: dict[str, dict[str, Any]],
    held: Mapping[str, list[Any]],
    section: Mapping[str, dict[str, Any]],
    clean: Callable[[str], str],
) -> None:
    """Give each continuation of `new` its messages back: the stored messages of the entry it follows and
    its added ones (as a reader puts them together), or, where that entry is not stored, its own `held`
    ones, redacted."""
    for key, messages in held.items():
        earlier = section.get(new[key]["follows"])
        before = earlier.get("messages") if earlier is not None else None
        new[key]["messages"] = before + new[key]["added"] if isinstance(before, list) else redact_value(messages, clean)


def _with_messages(path: Path | str, section: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """`section` with the messages of every generation written as a continuation put back: the messages of
    the one it `follows` (itself put back first), then its `added` ones."""
    for key in [k for k, e in section.items() if "messages" not in e and "follows" in e]:
        chain: list[str] = []  # each entry is walked once: the walk gives every entry on it its messages
        on_chain: set[str] = set()
        at = key
        while "messages" not in section[at]:  # walk back to an entry that holds its messages
            entry = section[at]
            follows, added = entry.get("follows"), entry.get("added")
            if not isinstance(added, list) or not isinstance(follows, str) or follows not in section:
                raise StoreError(
                    f"{path}: the generation {at[:12]} continues {str(follows)[:20]!r}, which is not in the "
                    "file (or says no messages of its own); delete it and record again"
                )
            if at in on_chain:
                raise StoreError(f"{path}: the generation {at[:12]} continues itself (a cycle); delete it")
            chain.append(at)
            on_chain.add(at)
            at = follows
        messages = section[at]["messages"]
        if not isinstance(messages, list):
            raise StoreError(f"{path}: the generation {at[:12]} has no list of messages")
        for each in reversed(chain):  # the earliest first: each list shares the one before's messages
            messages = messages + section[each]["added"]
            section[each] = {**section[each], "messages": messages}
    return section


def _apply(document: VerdictDocument, what: Section, changes: Mapping[str, dict[str, Any]]) -> None:
    """Put `changes` into a section of `document`: a key is a verdict or an unreadable reply, never both, so
    one written to either leaves the other (the newer answer stands)."""
    document.section(what).update(changes)
    other = _EXCLUSIVE.get(what)
    if other is not None:
        for key in changes:
            document.section(other).pop(key, None)


def _share_cases(sections: Mapping[Section, dict[str, dict[str, Any]]]) -> None:
    """Entries written together (held writes) that hold the same case, and name none, name it: it is stored once."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for section in sections.values():
        for entry in section.values():
            case = {f: entry[f] for f in CASE_FIELDS if f in entry}
            if case and "case" not in entry:
                groups.setdefault(case_id(case), []).append(entry)
    for named, alike in groups.items():
        if len(alike) > 1:
            for entry in alike:
                entry["case"] = named


class _DuplicateField(ValueError):
    """A JSON object names one field twice (JSON parsers disagree on which one counts)."""


def _unique_fields(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found = dict(pairs)
    if len(found) != len(pairs):
        seen: set[str] = set()
        for name, _ in pairs:
            if name in seen:
                raise _DuplicateField(name[:80])
            seen.add(name)
    return found


# One decoder for every verdict file: `json.loads` with a hook builds a new decoder (and its scanner) per call.
_DECODER = json.JSONDecoder(object_pairs_hook=_unique_fields)


class RefusedFile(OSError):
    """A stored file that is not read: not a regular file (a FIFO, a device), or too large."""


class FileTooLarge(RefusedFile):
    """A stored file larger than its reader accepts."""


# A verdict file larger than this is refused unread (a symlink to a huge file, a hostile commit).
MAX_FILE_BYTES = 64 << 20

_BINARY = getattr(os, "O_BINARY", 0)  # Windows: no newline translation
# A FIFO opened for reading blocks until a writer comes: open without waiting, then refuse it.
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_KINDS = {stat.S_IFIFO: "a FIFO", stat.S_IFCHR: "a character device", stat.S_IFBLK: "a block device",
          stat.S_IFSOCK: "a socket", stat.S_IFDIR: "a directory"}  # fmt: skip


def read_regular_file(path: Path | str, limit: int | None = None, *, head: bool = False) -> bytes:
    """The bytes of `path`, a regular file of at most `limit` (default `MAX_FILE_BYTES`) bytes; `RefusedFile`
    says why not.  A FIFO, a device or a larger file is refused without waiting on it or reading it
    whole; with `head`, a larger file gives its first `limit` bytes.  The os calls alone: `open`'s file
    object and buffered reader cost more than half of a replay's read."""
    limit = MAX_FILE_BYTES if limit is None else limit
    fd = os.open(path, os.O_RDONLY | _BINARY | _NONBLOCK)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise RefusedFile(f"not a regular file ({_KINDS.get(stat.S_IFMT(info.st_mode), 'not a regular file')})")
        if info.st_size > limit and not head:
            raise FileTooLarge(f"{info.st_size} bytes, over the limit of {limit}")
        # One read for a file of the size it says (one byte more tells whether it grew meanwhile);
        # a file that grew, or says 0 (/proc), is read on to its end or the limit.
        chunks = [os.read(fd, min(info.st_size, limit) + 1)]
        size = len(chunks[0])
        while size > info.st_size and size <= limit and (chunk := os.read(fd, min(1 << 16, limit + 1 - size))):
            size += len(chunk)
            chunks.append(chunk)
        if size > limit and not head:  # it grew while being read
            raise FileTooLarge(f"over the limit of {limit} bytes")
    finally:
        os.close(fd)
    return b"".join(chunks)[:limit]


def redact_entry(entry: Mapping[str, Any], clean: Callable[[str], str] | None = None) -> dict[str, Any]:
    """`entry` (a verdict, or a generation) as it is stored: None-valued fields dropped, and every string in
    it redacted, whatever the field (`redact_value`; `clean`: the redactor to share between entries).

    Redacting is idempotent, so a stored entry redacts to itself.  A secret inside the judge's reply
    becomes `[redacted]` (no quote, brace or digit), so the reply parses to the same score.
    """
    kept: dict[str, Any] = redact_value({k: v for k, v in entry.items() if v is not None}, clean)
    return kept


def _outcome_changes(document: VerdictDocument, decided: Mapping[str, dict[str, Any]]) -> bool:
    """Whether writing the outcomes `decided` would change what `document` holds."""
    if not decided:
        return False
    from .outcomes import stale_outcomes

    stored = document.outcomes
    return any(stored.get(key) != outcome for key, outcome in decided.items()) or bool(stale_outcomes(stored, decided))


def _apply_outcomes(stored: dict[str, dict[str, Any]], decided: Mapping[str, dict[str, Any]]) -> None:
    """`decided` into `stored`, in place of the outcomes they replace."""
    if not decided:
        return
    from .outcomes import stale_outcomes

    for key in stale_outcomes(stored, decided):
        del stored[key]
    stored.update(decided)


class VerdictFileWriteError(StoreError):
    """A verdict file could not be written (read-only tree, a file in the way, ...): `path`, `key`, and
    `reason` (the operating system's words).  Where the reply is kept instead is the caller's to say."""

    def __init__(self, path: Path, key: str, reason: str) -> None:
        self.path = path
        self.key = key
        self.reason = reason
        super().__init__(f"cannot write the verdict file {path} ({reason}); key {key[:12]} was not stored there")


class VerdictFileTooLarge(StoreError):
    """A verdict file would grow past `MAX_FILE_BYTES`, which no reader accepts: it is not written, and the
    test fails saying so (a warning would leave a recording that can never be replayed)."""

    def __init__(self, path: Path, size: int) -> None:
        super().__init__(
            f"refused to write the verdict file {path}: it would hold {size} bytes, over the limit of "
            f"{MAX_FILE_BYTES} bytes a verdict file may hold, so no later run could read it (it keeps what it "
            "held). Record less in this test: fewer or shorter simulated turns, judgments or generations, or "
            "split it into several tests"
        )
        self.path = path
        self.size = size


class VerdictFile(_Located):
    """The committed verdicts of one test item, loaded on first use and rewritten when changed.

    Writes (`put`) re-read the file under a cross-process lock and add to
    what is there, so recorders running at once keep every entry.  `release` frees the loaded
    entries of a test that finished, keeping `used` for prune.
    """

    def __init__(self, path: Path | str, nodeid: str, *, lock_dir: Path | None = None) -> None:
        super().__init__(path)
        self.nodeid = nodeid
        self.lock_dir = lock_dir  # None: default_lock_dir()
        self._document: VerdictDocument | None = None  # read on first need
        self._lock = threading.Lock()  # score_many may record from several threads
        self.used: set[str] = set()  # keys this run read or wrote, of every section (for prune)
        self._held: dict[Section, dict[str, dict[str, Any]]] | None = None  # writes held (see `held`)
        self._held_outcomes: dict[str, dict[str, Any]] = {}  # the outcomes of the held writes
        self._hold_limit = 0

    def _section(self, what: Section) -> dict[str, dict[str, Any]]:
        """The loaded verdicts (or generations, or unreadable replies); call with `_lock` held."""
        if self._document is None:
            self._document = VerdictDocument.read(self.location)
        return self._document.section(what)

    def get(self, key: str, what: Section = "verdict") -> dict[str, Any] | None:
        """The stored verdict (or generation) for `key`, or None; a hit is remembered as used."""
        with self._lock:
            entry = self._section(what).get(key)
            if entry is not None:
                self.used.add(key)
            return entry

    def holds(self, key: str, what: Section = "verdict") -> bool:
        """Whether a verdict (or generation) is stored under `key` (nothing is marked used: see `get`)."""
        with self._lock:
            return key in self._section(what)

    def holds_all(self, keys: Iterable[str], elsewhere: Callable[[str], bool]) -> bool:
        """Whether every verdict of `keys` is stored: in this file (a verdict, or an unreadable reply on record:
        the judge's answer all the same), or (asked only of the keys it lacks) `elsewhere` in the store."""
        missing = [key for key in keys if not self.holds(key) and not self.holds(key, "unreadable")]
        return all(elsewhere(key) for key in missing)

    def entries(self, what: Section = "verdict") -> dict[str, dict[str, Any]]:
        """A copy of every stored verdict (or generation), by key."""
        with self._lock:
            return dict(self._section(what))

    def put(self, key: str, entry: Mapping[str, Any], what: Section = "verdict", *, replace: bool = True) -> bool:
        """`put_many` of one entry (`replace` False: kept only where the key is not stored yet)."""
        return self.put_many({key: entry} if replace else {}, what, copies={} if replace else {key: entry})

    def put_many(
        self,
        entries: Mapping[str, Mapping[str, Any]],
        what: Section = "verdict",
        *,
        copies: Mapping[str, Mapping[str, Any]] | None = None,
        outcomes: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> bool:
        """Store one judgment's entries (verdicts, or generations), redacted, in one write: each replaces
        what the file held under its key; `copies` (entries found in another verdict file: same key, same
        judgment) are added only where the key is not stored yet.  Entries of several calls that share
        their case store it once (`shared_case`).  Entries other processes wrote meanwhile are kept.
        `outcomes`: what the judgment decided, under its key (see `store.outcomes`), written where the
        stored one differs, in place of the one it replaces.  While writes are held (`held`), the entries
        are this file's at once and on disk at the next flush.

        Return whether the file changed.  `StoreError` when an entry has no reply text or the file is
        malformed (it is never overwritten then), `VerdictFileWriteError` when it cannot be written."""
        copies = copies or {}
        for key, entry in (*entries.items(), *copies.items()):
            _validate_entry(self.path, key, entry, what=what)
        clean = redactor()  # the environment read once for the whole write; a shared part redacted once
        written = as_written(entries)
        # A continuation's messages are the earlier entry's (redacted already) and the ones it adds: only
        # those are redacted, not the whole conversation again at every turn (see `_rejoin`).
        held = {k: e.pop("messages") for k, e in written.items() if "follows" in e and "added" in e}
        new: dict[str, dict[str, Any]] = redact_value(written, clean) if entries else {}
        case = shared_case(new)
        if case is not None:
            named = case_id(case)
            for entry in new.values():
                entry["case"] = named
        copied: dict[str, dict[str, Any]] = redact_value(as_written(copies), clean) if copies else {}
        decided: dict[str, dict[str, Any]] = redact_value(dict(outcomes), clean) if outcomes else {}
        with self._lock:
            self.used.update(new, copied)
            if self._held is None:
                if self._document is not None:
                    _rejoin(new, held, self._section(what), clean)
                    if not self._changes(self._section(what), new, copied) and not _outcome_changes(
                        self._document, decided
                    ):
                        return False
                return self._write({what: (new, copied)}, decided, lambda on_disk: _rejoin(new, held, on_disk, clean))
            # Held: this file's at once (reads see them), on disk at the next flush.
            _rejoin(new, held, self._section(what), clean)
            changes = self._changes(self._section(what), new, copied)
            assert self._document is not None  # loaded by `_section`
            decisions = _outcome_changes(self._document, decided)
            if not changes and not decisions:
                return False
            _apply(self._document, what, changes)
            _apply_outcomes(self._document.outcomes, decided)
            self._held.setdefault(what, {}).update(changes)
            self._held_outcomes.update(decided)
            due = sum(map(len, self._held.values())) >= self._hold_limit
        if due:
            self.flush()
        return True

    @contextmanager
    def held(self, limit: int = 64) -> Iterator[None]:
        """Hold this file's writes while the block runs, writing them `limit` entries at a time and at its end:
        a run of many judgments into one file (a qualification) rewrites it a few times, not once per judgment.
        Entries written together that hold the same case store it once.  Reads see held entries at once."""
        with self._lock:
            self._held, self._hold_limit = {}, limit
        try:
            yield
        finally:
            try:
                self.flush()
            finally:
                with self._lock:
                    self._held = None

    def flush(self) -> bool:
        """Write the held entries (see `held`) in one write; whether the file changed."""
        with self._lock:
            held, decided = self._held, self._held_outcomes
            if held is None or (not held and not decided):
                return False
            self._held, self._held_outcomes = {}, {}
            _share_cases(held)
            return self._write({what: (changes, {}) for what, changes in held.items()}, decided)

    def _write(
        self,
        sections: Mapping[Section, tuple[dict[str, dict[str, Any]], dict[str, dict[str, Any]]]],
        decided: Mapping[str, dict[str, Any]],
        rejoin: Callable[[dict[str, dict[str, Any]]], None] | None = None,
    ) -> bool:
        """Re-read the file under its cross-process lock, add each section's (new, copied) entries and the
        outcomes `decided`, and write it if that changed it; call with `_lock` held.  `rejoin` gives the new
        continuations of a conversation their messages from the section as it is on disk (see `_rejoin`)."""
        from .locks import LockTimeout, verdict_file_lock  # only when recording

        first = next((key for new, copied in sections.values() for key in (*new, *copied)), next(iter(decided), ""))
        try:
            with verdict_file_lock(self.path, self.lock_dir):
                document = self._document = VerdictDocument.read(self.path)  # what others wrote is kept
                changed = False
                for what, (new, copied) in sections.items():
                    on_disk = document.section(what)
                    if rejoin is not None:
                        rejoin(on_disk)
                    changes = self._changes(on_disk, new, copied)
                    changed = changed or bool(changes)
                    _apply(document, what, changes)
                if _outcome_changes(document, decided):
                    _apply_outcomes(document.outcomes, decided)
                    changed = True
                if not changed:
                    return False
                # The document as read, changed, is written back: every section of it kept (a verdict's write
                # keeps the generations, and the reverse), a section added later too.
                document.test = self.nodeid
                document.write()
                return True
        except LockTimeout as exc:
            raise VerdictFileWriteError(self.path, first, f"another process held its lock {exc} for too long") from None
        except OSError as exc:
            where = f": {exc.filename}" if exc.filename else ""
            reason = f"{exc.__class__.__name__}: {exc.strerror or exc}{where}"
            raise VerdictFileWriteError(self.path, first, reason) from None

    @staticmethod
    def _changes(
        stored: Mapping[str, dict[str, Any]], new: Mapping[str, dict[str, Any]], copied: Mapping[str, dict[str, Any]]
    ) -> dict[str, dict[str, Any]]:
        """What of `new` and `copied` a section `stored` does not hold as it is."""
        changes = {k: e for k, e in copied.items() if k not in stored and k not in new}
        changes.update((k, e) for k, e in new.items() if stored.get(k) != e)
        return changes

    def release(self) -> None:
        """Forget the loaded entries (the test finished); `used` is kept, and a later `get` re-reads."""
        with self._lock:
            self._document = None
