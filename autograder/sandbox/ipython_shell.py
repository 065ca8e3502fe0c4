"""What `get_ipython()` returns in the sandbox: a stand-in for Jupyter's shell, which the cells IPython's
transformer wrote (ipython_syntax.py) call, and which a notebook may call itself.

A magic whose code IPython runs in the notebook's namespace runs it here the same way (ipython_magics: %time and
%prun their statement or body, %%capture its body, %timeit its statement once inside a namespace of its own, as
IPython's loop does), and gives back what IPython's gives (ipython_outputs: %%capture's printed text, %timeit -o's
result, %env's variables); %%writefile writes its file in the working folder, importable as in Jupyter. Every other
magic, a shell command (`!ls`, `files = !ls`: an empty list of lines) and any other attribute of the shell do
nothing: the sandbox has no shell, pager or kernel, and the output goes nowhere a grade reads. The shell holds
the notebook's own namespace and nothing of the grader's. Run only inside the worker (child.py imports it).
"""
from __future__ import annotations

import _sitebuiltins
import ast
import importlib
import os
import re
import sys
import traceback
from types import CodeType, FrameType
from typing import Any, Callable

import ipython_expand
import ipython_magics
import ipython_names
import ipython_outputs
import ipython_syntax


class Quiet:
    """Anything a notebook may ask of IPython that has no effect here: made with any arguments, called, or asked
    for any attribute, it answers quietly (an attribute, with another Quiet; a call, with None)."""

    def __init__(self, *args: Any, **options: Any) -> None:
        pass

    def __call__(self, *args: Any, **options: Any) -> None:
        return None

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return Quiet()


class ZMQExitAutocall(_sitebuiltins.Quitter):
    """`exit` and `quit` in a notebook, as Jupyter's kernel gives them (ipykernel's ZMQExitAutocall, in the user
    namespace; IPython hides the builtins'). Called, the kernel's raises nothing: it asks the front end to close
    the kernel. With `keep_kernel` true (quit(3), exit(True)) nothing else happens, and the rest of the cell and the
    cells below run; otherwise the kernel ends 0.1 s later (its loop stops), so a cell that starts after that never
    runs and nbclient raises DeadKernelError: nbgrader's autograde cannot grade the notebook (measured, nbclient
    0.11, ipykernel 7.4). Here that call stops its cell, as site's Quitter does (messages: "called exit()"), and the
    cells below run: a grade no stricter than the kernel's end, as for os._exit."""

    def __call__(self, keep_kernel: Any = False) -> None:  # type: ignore[override]  # site's always raises
        if not keep_kernel:
            super().__call__(*(() if keep_kernel is False else (keep_kernel,)))


class Lines(list):
    """What `!cmd` gives (IPython's SList): the command's lines, here none; its text forms are empty too."""

    s = n = ""
    l = p = property(lambda self: [])  # noqa: E741  (SList's own names)

    def __getattr__(self, name: str) -> Any:  # grep, fields, sort: another (empty) list of lines
        if name.startswith("__"):
            raise AttributeError(name)
        return lambda *args, **options: Lines()


# A notebook cell's code file name (child.cell_codes: "<cell linear>"; one that run_cell ran "<cell linear, by
# run_cell>"), whose first word is the grade id of the cell.
CELL_FILE = re.compile(r"<cell (\w+)")


def calling_cell() -> str:
    """The grade id of the notebook cell whose code is the innermost on the stack ('' if none: a callback the event
    loop ran), read from each frame's file name with str's own methods (a code's may be a str subclass)."""
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        found = CELL_FILE.match(str.__str__(frame.f_code.co_filename))
        if found:
            return found[1]
        frame = frame.f_back
    return ""


class ZMQInteractiveShell(Quiet):
    """Jupyter's shell, as far as a notebook's own code reaches it (its class name is the one notebooks test): the
    notebook's namespace as user_ns, user_global_ns and user_module; push(), ex(), ev(), run_cell() and del_var()
    on it as IPython's InteractiveShell does them; the magics that run code or change names (ipython_names)."""

    def __init__(self, namespace: dict, hook: ipython_outputs.DisplayHook,
                 compile_cell: Callable[[str, str], tuple[CodeType, ...]], hidden: dict,
                 futures: Callable[[], int]) -> None:
        self.user_ns = self.user_global_ns = namespace
        self.user_module = ipython_names.Module(namespace)
        self.displayhook, self._compile_cell = hook, compile_cell
        self._futures = futures  # the future flags the notebook's compiler holds now (cell_runner)
        self.user_ns_hidden = hidden  # the shell's own names, which %reset leaves (IPython's user_ns_hidden)

    def run_line_magic(self, magic_name: str, line: str, _stack_depth: int = 1) -> Any:
        name = ipython_magics.ALIASES.get(magic_name, magic_name)
        caller = sys._getframe(_stack_depth)
        line = ipython_expand.expanded(name, line, self.user_ns, caller.f_locals)
        if name not in ipython_magics.LINE_MAGICS:  # %sx, %pip, %cd, ...: nothing, as for a shell command
            return None
        if name in ("env", "set_env"):
            return ipython_outputs.env(line)
        if name in ipython_names.MAGICS:
            return ipython_names.MAGICS[name](self, line)
        statement = ipython_magics.statement(name, line)
        if statement is None:
            return None
        where = (caller.f_code.co_filename, caller.f_lineno)
        if name == "timeit":  # IPython: inside `def inner`, binding nothing
            return ipython_outputs.timed(line[:len(line) - len(statement)], lambda: self._run(statement, where, {}))
        # %time sees the caller's locals as IPython passes them (needs_local_scope); %prun the namespace alone
        return self._run(statement, where, caller.f_locals if name == "time" else self.user_ns, name != "prun")

    def run_cell_magic(self, magic_name: str, line: str, cell: str) -> Any:
        name = ipython_magics.ALIASES.get(magic_name, magic_name)
        caller = sys._getframe(1)
        line = ipython_expand.expanded(name, line, self.user_ns, caller.f_locals)
        where = (caller.f_code.co_filename, caller.f_lineno + 1)  # the body starts below the magic's line
        if name not in ipython_magics.CELL_MAGICS:  # %%bash, %%script, ...: nothing, as for a shell command
            return None
        if name == "writefile":
            return self._write(line, cell)
        if name == "capture":
            captured = ipython_outputs.captured(line, lambda: self._run(cell, where, self.user_ns))
            if ipython_magics.captured_name(line):
                self.user_ns[ipython_magics.captured_name(line)] = captured
            return None
        statement = ipython_magics.statement(name, line)
        if statement is None:
            return None
        if statement.strip():  # %%prun's statement on the magic's line runs first, as IPython joins them
            cell, where = statement + "\n" + cell, (where[0], where[1] - 1)
        if name == "timeit":
            return ipython_outputs.timed(line, lambda: self._run(cell, where, {}))
        return self._run(cell, where, self.user_ns, name != "prun")

    def push(self, variables: dict | str | list | tuple, interactive: bool = True) -> None:
        """Bind `variables` (a dict, or names whose values the caller's frame gives) in the namespace."""
        if not isinstance(variables, (dict, str, list, tuple)):
            raise ValueError("variables must be a dict/str/list/tuple")
        if not isinstance(variables, dict):
            caller = sys._getframe(1)
            names = variables.split() if isinstance(variables, str) else list(variables)
            variables = {name: eval(name, caller.f_globals, caller.f_locals) for name in names}
        self.user_ns.update(variables)

    def ex(self, cmd: str) -> None:
        exec(cmd, self.user_global_ns, self.user_ns)

    def ev(self, expr: str) -> Any:
        return eval(expr, self.user_global_ns, self.user_ns)

    def run_cell(self, raw_cell: str, store_history: bool = False, silent: bool = False, shell_futures: bool = True,
                 cell_id: Any = None) -> ipython_names.ExecutionResult:
        """`raw_cell` run as a cell of the notebook's (an error in it printed and kept in the result, as IPython's
        run_cell keeps it: the calling cell goes on). Its code is named after the cell that called it ("<cell
        module, by run_cell>", %run of a notebook included): a message about a class it defines names that cell,
        whose code the student wrote; never the cell's own name, whose lines its line numbers are not
        (cell_runner.stopped_at follows a frame of the cell's file name as the cell's own lines)."""
        result = ipython_names.ExecutionResult(raw_cell)
        self.displayhook.result = None
        try:
            for code in self._compile_cell(f"{calling_cell()}, by run_cell", raw_cell):
                exec(code, self.user_ns)
        except Exception as error:
            result.error_in_exec = error
            traceback.print_exc()
        result.result = self.displayhook.result
        return result

    def del_var(self, varname: str, by_name: bool = False) -> None:
        ipython_names.delete(self, varname, by_name)

    def _run(self, code: str, where: tuple[str, int], local: dict, futures: bool = True) -> Any:
        """Run `code` (IPython syntax, transformed as Jupyter does) as if at line where[1] of cell where[0], with
        the notebook's namespace as its globals; the value of its last line when that is an expression, as
        %time returns it. Parsed and compiled with the notebook's future imports, as IPython's magics compile with
        its shell's compiler (`<>` under barry_as_FLUFL), but for %prun's (`not futures`: cProfile's exec)."""
        filename, line = where
        # dont_inherit: the notebook's code takes no `from __future__` of this file's, as in Jupyter
        flags = self._futures() if futures else 0
        tree = compile("\n" * (line - 1) + ipython_syntax.as_python(code), filename, "exec", ast.PyCF_ONLY_AST | flags,
                       dont_inherit=True)
        last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
        exec(compile(tree, filename, "exec", flags, dont_inherit=True), self.user_ns, local)
        value = ast.Expression(last.value) if last else None
        return eval(compile(value, filename, "eval", flags, dont_inherit=True), self.user_ns, local) if value else None

    def _write(self, line: str, cell: str) -> None:
        """%%writefile [-a] name: the body written to the file in the working folder, which then is on sys.path as
        the notebook's folder is in Jupyter (`import name`)."""
        words = line.split()
        append = bool({"-a", "--append"} & set(words))
        filename = next((w for w in words if not w.startswith("-")), "")
        if filename[:1] in "'\"" and filename[-1:] == filename[:1] and len(filename) > 1:
            filename = filename[1:-1]
        with open(os.path.expanduser(filename), "a" if append else "w", encoding="utf-8") as file:
            file.write(cell)
        if os.getcwd() not in sys.path:
            sys.path.append(os.getcwd())
        importlib.invalidate_caches()

    def getoutput(self, cmd: str, split: bool = True, depth: int = 0) -> Lines:
        return Lines()

    def system(self, cmd: str) -> None:
        return None
