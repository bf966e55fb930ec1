"""A Bash line read with a real shell parser (tree-sitter's Bash grammar), so rules judge what runs.

    line = parse_line("A=1 timeout 5 rm -rf x && echo 'rm y' | bash")
    [c.words for c in line.commands]   # [('timeout', '5', 'rm', '-rf', 'x'), ('rm', '-rf', 'x'),
                                       #  ('echo', 'rm y'), ('bash',), ('rm', 'y')]
    line.opaque                        # why no allow rule can let it run: ('bash runs shell code from its input',)

`parse_line` finds every simple command the line can run: in lists, pipelines, subshells, braces, function
bodies, if/while/for/case bodies, and in command and process substitutions wherever they sit (inside
double quotes, redirection targets, here-strings, here-documents, arithmetic). Each command comes with its
words after quote removal (`\\rm`, `"rm"`, `r''m` and `$'\\x72m'` are all `rm`; `{rm,x}` is brace-expanded);
a word that is not static (`$x`, `$(…)`) is kept as written and marked. Wrappers are seen through
(`sudo`, `env -i`, `timeout 5`, `find -exec`, … see `bash_wrappers`): the wrapped command is listed too.
Shell code given as a string (`bash -c`, `eval`, `su -c`, `watch`, `ssh host CMD`, a here-string or a
pipe into a shell) is parsed in turn when it is static, and its commands listed as `nested`.

Three things are kept for the policy: `opaque`, the reasons no allow rule can let the line run (shell code
run from a string, a line the parser could not read, anything in `hidden`); `hidden`, the reasons a program
could run that no rule can see (a command name that is not static, shell code that is not static, an
option of a wrapper it does not know, a variable like PATH or LD_PRELOAD set, arithmetic on a variable,
which Bash may evaluate as code); and the files the line writes (`writes`: redirections `>`, `>>`, `>|`,
`&>`, `>&FILE`, `<>`, and `tee`'s files) and reads through `<`.

tree-sitter is imported when the first line is parsed (never for `sagent --version`); results are cached
per line.
"""

from __future__ import annotations

import functools
import os
import re
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, NamedTuple

from sagent.permissions.bash_text import echoed, heredoc_substitutions, loose_words, name_arguments
from sagent.permissions.bash_words import Word, expand_word, has_glob, static_word, text_of
from sagent.permissions.bash_wrappers import BENIGN, SHELLS, Words, peel, program_name

if TYPE_CHECKING:
    from tree_sitter import Node, Parser

Role = Literal["run", "wrapper"]

DANGEROUS_VARIABLES = frozenset(
    {"PATH", "HOME", "ENV", "BASH_ENV", "SHELLOPTS", "BASHOPTS", "PS4", "PROMPT_COMMAND", "CDPATH"}
    | {"GLOBIGNORE", "BASH_XTRACEFD", "BASH_LOADABLES_PATH", "EXECIGNORE", "BASH_COMPAT"}
)
"""Variables that change which program a name runs, or run code, or change how later words are read."""
_DANGEROUS_PREFIXES = ("LD_", "DYLD_", "BASH_FUNC_")
_NOT_FILES = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "-"})
_MAX_STRINGS = 64  # shell strings parsed for one line (nested ones included)
_MAX_DEPTH = 6  # shell strings inside shell strings
_MAX_TREE = 400  # nesting of the tree itself (substitutions in substitutions …)
_RISKY_SUBSCRIPT = re.compile(r"\[[^\]]*[^\]0-9@*\s-][^\]]*\]")  # a subscript other than digits, @ or *
_TEXT_NODES = frozenset({"word", "regex", "string_content", "extglob_pattern"})
_BEFORE_COMMENT = frozenset({b" ", b"\t", b"\n", b";", b"&", b"|", b"(", b")", b"\r"})
_OFFSET = re.compile(r"\$\{[#!]?[A-Za-z_0-9@*]+(?:\[[^\]]*\])?:(?![-=+?])")  # `${x:1}`, not `${x:-d}`
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


class Command(NamedTuple):
    """One simple command the line runs. `words`: its words after quote removal (a word that is not
    static is kept as written, and `static` says which are); `assignments`: the `NAME=value` words before
    it; `role`: "wrapper" for a wrapper that changes only how the next command runs (`time`, `nice`,
    `timeout`, … : allowed when what it wraps is), "run" otherwise; `via`: the wrapper it was found in;
    `nested`: found in shell code given as a string; `open_ended`: more arguments come at run time (xargs)."""

    words: tuple[str, ...]
    static: tuple[bool, ...] = ()
    assignments: tuple[str, ...] = ()
    role: Role = "run"
    via: str = ""
    nested: bool = False
    open_ended: bool = False

    @property
    def text(self) -> str:
        """The words joined by spaces (for showing and for `*` patterns)."""
        return " ".join(self.words)

    def variants(self) -> tuple[tuple[str, ...], ...]:
        """The words a deny or ask rule is held against: as written (assignments left out), and with the
        program's path taken off (`/bin/rm` -> `rm`)."""
        if self.words and self.static[0]:
            name = program_name(self.words[0])
            if name != self.words[0]:
                return (self.words, (name, *self.words[1:]))
        return (self.words,)

    @property
    def program(self) -> str:
        """The program's name as rules compare it (`/bin/rm` -> `rm`); empty when it is not static."""
        return program_name(self.words[0]) if self.words and self.static[0] else ""


@dataclass(frozen=True, slots=True)
class ParsedLine:
    """What a Bash line runs, writes and reads, and what in it the rules cannot see (see the module)."""

    commands: tuple[Command, ...]
    writes: tuple[str, ...] = ()
    reads: tuple[str, ...] = ()
    opaque: tuple[str, ...] = ()
    hidden: tuple[str, ...] = ()
    hidden_writes: tuple[str, ...] = ()
    loose_words: tuple[str, ...] = ()  # the line's words, for deny rules, when it did not parse cleanly

    @property
    def direct(self) -> tuple[Command, ...]:
        """The commands an allow rule is held against: those not found inside a shell string."""
        return tuple(c for c in self.commands if not c.nested)


_LOCAL = threading.local()  # a tree-sitter parser is not safe to share between threads: one each


def _parser() -> Parser:
    parser: Parser | None = getattr(_LOCAL, "parser", None)
    if parser is None:
        import tree_sitter
        import tree_sitter_bash

        parser = _LOCAL.parser = tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))
    return parser


@functools.lru_cache(maxsize=512)
def parse_line(line: str) -> ParsedLine:
    """What `line` runs (see the module)."""
    reader = _Reader()
    reader.read(line, 0, nested=False)
    if "\\\n" in line:
        # tree-sitter splits a word at a backslash-newline, where Bash joins the two halves: read the
        # joined line too, and keep both readings (a rule must hold for each).
        reader.read(line.replace("\\\n", ""), 0, nested=False)
    return reader.result(line)


def split_commands(line: str) -> tuple[Command, ...] | None:
    """The commands `line` runs, or None when some of what it runs cannot be seen (see `ParsedLine`)."""
    parsed = parse_line(line)
    return None if parsed.opaque else parsed.commands


class _Reader:
    """One walk over a line's tree (and the trees of the shell strings it holds)."""

    def __init__(self) -> None:
        self.commands: list[Command] = []
        self.writes: list[str] = []
        self.relative_writes: list[str] = []
        self.reads: list[str] = []
        self.opaque: list[str] = []
        self.hidden: list[str] = []
        self.hidden_writes: list[str] = []
        self.changes_dir = False
        self.arithmetic = False  # arithmetic on a variable or a substitution's output
        self.seeded = False  # something may put code in a value: a substitution, input, a string with `[`
        self.scripts: list[str] = []  # files run as programs or scripts
        self.broken = False
        self.strings = 0

    # ------------------------------------------------------------------------------------------ lines

    def read(self, text: str, depth: int, nested: bool) -> None:
        if depth > _MAX_DEPTH or self.strings > _MAX_STRINGS:
            self._hide("shell code nested too deep to follow")
            return
        source = text.encode("utf-8", "surrogateescape")
        tree = _parser().parse(source)
        if tree.root_node.has_error:
            self.broken = True
            self._hide("the line does not parse as Bash")
        self.depth = depth
        self.nested = nested
        outer, self.source = getattr(self, "source", b""), source
        self._visit(tree.root_node, 0)
        self.source = outer

    def result(self, line: str) -> ParsedLine:
        if self.arithmetic and self.seeded:
            self._hide("arithmetic on a value the line may fill with code, which Bash would run")
        written = {os.path.normpath(w) for w in (*self.writes, *self.relative_writes)}
        if any(os.path.normpath(script) in written for script in self.scripts):
            self._hide("it runs a file it writes itself")
        if self.changes_dir and self.relative_writes:
            self.hidden_writes.append("writes to a relative path after changing folder")
        writes = (*self.writes, *self.relative_writes)
        opaque = [*self.opaque, *self.hidden, *self.hidden_writes]
        loose = loose_words(line) if self.broken else ()
        return ParsedLine(
            tuple(dict.fromkeys(self.commands)),
            tuple(dict.fromkeys(writes)),
            tuple(dict.fromkeys(self.reads)),
            tuple(dict.fromkeys(opaque)),
            tuple(dict.fromkeys(self.hidden)),
            tuple(dict.fromkeys(self.hidden_writes)),
            loose,
        )

    def _hide(self, reason: str) -> None:
        self.hidden.append(reason)

    # ------------------------------------------------------------------------------------------- tree

    def _visit(self, node: Node, level: int) -> None:
        if level > _MAX_TREE:
            self._hide("the line nests too deep to follow")
            return
        if not node.is_named:
            if node.is_missing:
                self.broken = True
                self._hide("the line does not parse as Bash")
            return  # an operator or a quote: nothing below it
        kind = node.type
        if kind in _TEXT_NODES:  # the most common node: a leaf
            text = text_of(node)
            if "$" in text or "`" in text:
                self._missed_text(text)
            if kind == "word" and ("[" in text or "\\" in text):
                self.seeded = True
            return
        if kind == "ERROR" or node.is_missing:
            self.broken = True
            self._hide("the line does not parse as Bash")
        if kind == "command":
            self._command(node, level)
            return
        if kind == "command_substitution" and text_of(node).startswith("`"):
            # Inside backticks `\``, `\$` and `\\` lose their backslash before the code is read (so a `\``
            # starts a nested substitution): read the code as Bash does rather than the grammar's tree.
            raw = text_of(node)[1:-1]
            if re.search(r"(?<!\\)`", raw):  # Bash ends a substitution at its first plain backtick
                self.broken = True
                self._hide("backticks the parser pairs differently from Bash")
            code = re.sub(r"\\([`$\\])", r"\1", raw)
            depth, nested = self.depth, self.nested
            self.read(code, depth + 1, nested)
            self.depth, self.nested = depth, nested
            return
        if (
            kind == "comment"
            and node.start_byte
            and self.source[node.start_byte - 1 : node.start_byte] not in _BEFORE_COMMENT
        ):
            self.broken = True  # Bash starts a comment only at the start of a word
            self._hide("a `#` the parser took for a comment where Bash does not")
        if kind == "variable_assignment":
            self._assignment(node)
        elif kind == "file_redirect":
            self._redirect(node)
        elif kind in ("arithmetic_expansion", "c_style_for_statement") or (
            kind == "compound_statement" and node.child_count and node.children[0].type == "(("
        ):
            self._arithmetic(node)
        elif kind == "subscript":
            index = node.child_by_field_name("index")
            if index is not None and text_of(index) not in ("@", "*"):
                self._arithmetic(index)
        elif kind in ("command_substitution", "process_substitution"):
            self.seeded = True  # its output is data a variable may hold
        elif kind in ("raw_string", "ansi_c_string", "string_content"):
            word = static_word(node) if kind != "string_content" else None
            text = word.text if word is not None else text_of(node)
            self.seeded = self.seeded or any(c in text for c in "[$`\\")
        elif kind == "test_command":
            self._test(node)
        elif kind == "heredoc_redirect":
            self._heredoc(node)
            return
        elif kind in ("declaration_command", "unset_command"):
            self._names(node)
        elif kind == "expansion":
            text = text_of(node)
            if "@P" in text:
                self._hide("${…@P} expands a variable's value as a prompt, which runs what it holds")
            elif _OFFSET.match(text):
                self._arithmetic(node, skip_first=True)  # `${x:$o:$n}`: offsets are arithmetic
        for child in node.children:
            self._visit(child, level + 1)

    def _assignment(self, node: Node) -> None:
        name = node.child_by_field_name("name")
        text = text_of(name) if name is not None else text_of(node).partition("=")[0]
        text = text.partition("[")[0].rstrip("+")
        if text in DANGEROUS_VARIABLES or text.startswith(_DANGEROUS_PREFIXES):
            self._hide(f"it sets {text}, which changes what commands run")

    def _arithmetic(self, node: Node, skip_first: bool = False) -> None:
        """Arithmetic evaluates a variable's value as an expression, and a subscript in that value runs
        its substitutions (`x='a[$(cmd)]'; echo $((x))` runs cmd): note that the line does arithmetic on a
        variable or on a substitution's output. It counts as unseen only if the line may also put code in
        a value (see `seeded`)."""
        children = node.named_children[1:] if skip_first else [node]
        for top in children:
            for sub in [top, *_descendants(top, into_substitutions=False)]:
                if sub.type in ("simple_expansion", "expansion", "variable_name", "command_substitution") or (
                    sub.type == "word" and _IDENTIFIER.match(text_of(sub))
                ):
                    self.arithmetic = True
                    return

    def _heredoc(self, node: Node) -> None:
        """A here-document: with an unquoted delimiter its body is expanded, so the substitutions in it
        run. The grammar reads such bodies unreliably (it misses backticks and `<<-` bodies), so the body
        is scanned here: each `$(…)` and backtick is parsed as code, arithmetic is held as above."""
        start = next((c for c in node.named_children if c.type == "heredoc_start"), None)
        body = next((c for c in node.named_children if c.type == "heredoc_body"), None)
        for child in node.children:
            if child.type not in ("heredoc_body", "heredoc_start", "heredoc_end"):
                self._visit(child, 1)  # the rest of the line the grammar put here (`<<EOF | bash`)
        end = next((c for c in node.named_children if c.type == "heredoc_end"), None)
        if start is not None and not self._ends_alone(start, end, text_of(node).startswith("<<-")):
            # Bash ends a here-document only at a line that is its delimiter alone; otherwise the body runs
            # on to the end of the line, substitutions and all.
            self.broken = True
            self._hide("a here-document whose end the parser places differently from Bash")
            self._missed_text(self.source[start.end_byte :].decode("utf-8", "surrogateescape"))
            return
        if body is None or start is None or any(q in text_of(start) for q in "'\"\\"):
            return
        self._missed(body)

    def _ends_alone(self, start: Node, end: Node | None, dash: bool) -> bool:
        """Whether the here-document's end is a line holding its delimiter alone (tabs first with `<<-`)."""
        if end is None:
            return False
        delimiter = re.sub(r"[\\'\"]", "", text_of(start))
        first = self.source.rfind(b"\n", 0, end.start_byte) + 1
        last = self.source.find(b"\n", end.end_byte)
        line = self.source[first : len(self.source) if last < 0 else last].decode("utf-8", "surrogateescape")
        return (line.lstrip("\t") if dash else line) == delimiter

    def _missed(self, node: Node) -> None:
        """Text the grammar left plain that Bash expands (`[[ x == $(…) ]]` after a word, read as a regex):
        its substitutions are parsed as code."""
        self._missed_text(text_of(node))

    def _missed_text(self, text: str) -> None:
        if not any(mark in text for mark in ("$(", "`", "$[")):
            return
        found = heredoc_substitutions(text)
        if found is None:
            self._hide("a substitution the parser did not read")
            return
        codes, arithmetic = found
        if arithmetic:
            self._hide("arithmetic on a variable, which Bash may evaluate as code")
        for code in codes:
            depth, nested = self.depth, self.nested
            self.read(code, depth + 1, nested)
            self.depth, self.nested = depth, nested

    def _names(self, node: Node) -> None:
        """`declare`, `unset`, … take variable names; a subscript in one is arithmetic that may run code."""
        for child in node.named_children:
            if child.type != "variable_assignment" and "[" in text_of(child):
                word = static_word(child)
                self._subscript(None if word is None else word.text)

    def _subscript(self, name: str | None) -> None:
        """A variable name given to a builtin (`printf -v NAME`, `declare NAME=…`): a subscript in it is
        arithmetic, and code in it runs."""
        if name is None or any(mark in name for mark in ("$(", "`", "$[")):
            self._hide("a variable name with a subscript Bash evaluates as code")
        elif _RISKY_SUBSCRIPT.search(name):
            self.arithmetic = True

    def _test(self, node: Node) -> None:
        for sub in _descendants(node):
            if sub.type == "test_operator" and text_of(sub) in ("-eq", "-ne", "-lt", "-le", "-gt", "-ge"):
                parent = sub.parent
                if parent is not None:
                    self._arithmetic(parent)

    # --------------------------------------------------------------------------------------- commands

    def _command(self, node: Node, level: int) -> None:
        assignments: list[str] = []
        words: list[str] = []
        static: list[bool] = []
        for index, child in enumerate(node.children):
            field = node.field_name_for_child(index)
            if child.type == "variable_assignment":
                assignments.append(text_of(child))
            elif field in ("name", "argument"):
                self._word(child, field == "name", words, static)
            elif child.type.endswith("_redirect") or child.type in ("comment",):
                pass
            elif not child.is_named and field is None and child.type not in ("(", ")"):
                words.append(text_of(child))  # a token the grammar left loose (`$"…"`): not static
                static.append(False)
        if words or assignments:
            self._add(tuple(words), tuple(static), tuple(assignments), self.nested, "", False, node)
        for child in node.children:  # substitutions in its words, assignments and redirections
            self._visit(child, level + 1)

    def _word(self, node: Node, is_name: bool, words: list[str], static: list[bool]) -> None:
        word = static_word(node)
        expanded = expand_word(word) if word is not None else None
        # A glob in a program's name hides which program runs, unless only its folder is a glob (`/???/rm`).
        name_globs = is_name and word is not None and has_glob(Word(word.text, word.skeleton.rpartition("/")[2]))
        if word is None or expanded is None or name_globs:
            words.append(text_of(node))
            static.append(False)
            return
        words.extend(expanded)
        static.extend([True] * len(expanded))

    def _add(
        self,
        words: tuple[str, ...],
        static: tuple[bool, ...],
        assignments: tuple[str, ...],
        nested: bool,
        via: str,
        open_ended: bool,
        node: Node | None,
    ) -> None:
        if words and static[0] and program_name(words[0]) == "env":  # `env PATH=… cmd` sets it as well
            assignments = (*assignments, *(w for w in words[1:] if "=" in w and not w.startswith("-")))
        for assignment in assignments:
            name = assignment.partition("=")[0].partition("[")[0].rstrip("+")
            if name in DANGEROUS_VARIABLES or name.startswith(_DANGEROUS_PREFIXES):
                self._hide(f"it sets {name}, which changes what commands run")
        if not words:
            return
        if not static[0]:
            self.commands.append(Command(words, static, assignments, "run", via, nested, open_ended))
            self._hide(f"the program's name is not static: {words[0]}")
            return
        name = program_name(words[0])
        view: Words = [w if s else None for w, s in zip(words, static, strict=True)]
        peeled = peel(name, view)
        role: Role = "wrapper" if peeled is not None and name in BENIGN else "run"
        self.commands.append(Command(words, static, assignments, role, via, nested, open_ended))
        self._special(name, view)
        if name in ("source", ".") and len(view) > 1:
            self._script(name, view[1], node)
        elif "/" in words[0]:
            self.scripts.append(words[0])
        if name == "coproc" and any(w in ("{", "(") for w in words[1:3]):
            self.broken = True  # `coproc NAME { …; }`: a form the grammar does not read
            self._hide("coproc with a compound command")
        if peeled is None:
            return
        if peeled.unsure:
            self._hide(peeled.unsure)
        for target in peeled.writes:
            self._write(target)
        if peeled.reads_input:
            self._shell_input(name, node, shell=not peeled.foreign)
        if peeled.script is not None:
            self._script(name, view[peeled.script], node)
        for code in peeled.strings:
            self.opaque.append(f"{name} runs shell code given as a string")
            if code is None:
                self._hide(f"{name} runs shell code that is not static")
            else:
                self._string(code)
        spans = ([(peeled.start, peeled.end)] if peeled.start is not None else []) + list(peeled.more)
        for start, end in spans:
            inner = slice(start, end)
            self._add(words[inner], static[inner], (), nested, name, open_ended or peeled.open_ended, None)

    def _special(self, name: str, view: Words) -> None:
        """Builtins and programs whose effect the rules must know about."""
        args = view[1:]
        if name in ("cd", "pushd", "popd"):
            self.changes_dir = True
        elif name == "alias" and any(a is None or "=" in a for a in args):
            self._hide("alias defines a command the rules cannot see")
        elif name == "hash" and "-p" in args:
            self._hide("hash -p points a name at another program")
        elif name == "enable" and any(a is None or a.startswith("-f") for a in args):
            self._hide("enable -f loads a builtin from a file")
        elif name in ("declare", "typeset", "export", "local", "readonly") and any(a is None for a in args):
            self._hide(f"{name} with a word that is not static may set any variable")
        for argument in name_arguments(name, args):
            if argument is None or "[" in argument:
                self._subscript(argument)
        if name in ("let", "read", "mapfile", "readarray", "printf", "getopts", "eval", "source", "."):
            self.seeded = True  # data read at run time, or built with escapes
            self.arithmetic = self.arithmetic or name == "let"
        if name == "tee":
            options = True
            for arg in args:
                if options and arg == "--":
                    options = False
                elif options and arg is not None and arg.startswith("-") and arg != "-":
                    continue
                else:
                    self._write(arg)

    def _script(self, name: str, script: str | None, node: Node | None) -> None:
        """A shell or `source` given a file: its input when the file is the input, else a script (which the
        rules see only by its name, unless the line itself writes it)."""
        if script is None:
            self._hide(f"{name} runs a script whose name is not static")
        elif script in ("/dev/stdin", "-") or script.startswith(("/dev/fd/", "/proc/")):
            self._shell_input(name, node)
        else:
            self.scripts.append(script)

    def _shell_input(self, name: str, node: Node | None, shell: bool = True) -> None:
        """A shell (or, `shell` False, another interpreter) reading code from its input: a shell's is parsed
        where it is static (a here-string, a here-document, `echo`/`printf` piped in); an interpreter's
        cannot be read by shell rules. Either way no allow rule lets the line run."""
        inputs: list[str | None] = []  # the code fed to it, None where it cannot be read
        element = node
        redirects = [c for c in node.children if c.type.endswith("_redirect")] if node is not None else []
        if node is not None and node.parent is not None and node.parent.type == "redirected_statement":
            element = node.parent
            redirects += [c for c in element.children if c.type.endswith("_redirect")]
        for redirect in redirects:
            if redirect.type == "herestring_redirect":
                targets = list(redirect.named_children)
                word = static_word(targets[-1]) if targets else None
                inputs.append(word.text if word is not None else None)
            elif redirect.type == "heredoc_redirect":
                body = next((c for c in redirect.named_children if c.type == "heredoc_body"), None)
                text = text_of(body) if body is not None else None
                inputs.append(None if text is None or "$" in text or "`" in text else text)
            elif redirect.type == "file_redirect" and any(c.type in ("<", "<&") for c in redirect.children):
                targets = [c for c in redirect.named_children if c.type != "file_descriptor"]
                source = static_word(targets[-1]) if targets else None
                if source is None or any(c.type == "<&" for c in redirect.children) or source.text.startswith("/dev/"):
                    inputs.append(None)
                else:
                    inputs.append("")  # a script file: a program like any other
        previous = element.prev_sibling if element is not None else None
        if element is not None and previous is not None and previous.type in ("|", "|&"):
            inputs.append(echoed(element.prev_named_sibling))
        if node is None or (not inputs and self.nested):
            inputs.append(None)
        if shell or inputs:
            self.opaque.append(f"{name} runs {'shell ' if shell else ''}code from its input")
        for code in inputs:
            if code is None:
                self._hide(f"{name} runs {'shell ' if shell else ''}code from an input the rules cannot read")
            elif code and shell:
                self._string(code)
            elif code:  # another language's code: held against deny rules as `python -c CODE` is
                self.commands.append(Command((name, "-c", code), (True, True, True), (), "run", name, True))

    def _string(self, code: str | None) -> None:
        if code is None:
            self._hide("shell code that is not static")
            return
        self.strings += 1
        depth, nested = self.depth, self.nested
        self.read(code, depth + 1, nested=True)
        self.depth, self.nested = depth, nested

    # ------------------------------------------------------------------------------------ redirections

    def _redirect(self, node: Node) -> None:
        operator = next((c.type for c in node.children if not c.is_named), "")
        targets = [c for c in node.children if node.field_name_for_child(node.children.index(c)) == "destination"]
        if not targets:
            return
        word = static_word(targets[0])
        if operator in ("<", "<&"):
            if word is not None and not word.text.isdigit() and word.text != "-":
                self.reads.append(word.text)
            return
        if operator not in (">", ">>", ">|", "&>", "&>>", ">&", "<>", "&>|"):
            return
        if operator == ">&" and word is not None and (word.text.isdigit() or word.text == "-"):
            return  # `2>&1`, `>&-`: a descriptor, not a file
        self._write(word.text if word is not None else None)

    def _write(self, target: str | None) -> None:
        if target is None:
            self.hidden_writes.append("writes to a file whose name is not static")
            return
        if target in _NOT_FILES or target.startswith("/dev/fd/"):
            return
        if target.startswith(("/", "~")):
            self.writes.append(target)
        else:
            self.relative_writes.append(target)


def _descendants(node: Node, into_substitutions: bool = True) -> list[Node]:
    found: list[Node] = []
    stack = list(node.children)
    while stack and len(found) < 10_000:
        child = stack.pop()
        found.append(child)
        if into_substitutions or child.type not in ("command_substitution", "process_substitution"):
            stack.extend(child.children)
    return found


__all__ = ["DANGEROUS_VARIABLES", "SHELLS", "Command", "ParsedLine", "parse_line", "split_commands"]
