"""What a module's own script code hands its Cells: ``if __name__ == "__main__":`` blocks and module-level functions
(``def test_head(): ...``) that build a Cell of the module and call it.

Model packages often end a module with a smoke test::

    if __name__ == "__main__":
        assigner = BBoxAssigner()
        rois = ms.Tensor(np.random.uniform(0, 640, (2, 1000, 4)))
        out = assigner(rois, rois_mask, gts)

When no graph code of the project can reach an instance of the Cell (mindocr's ``CascadeROIHeads`` keeps its
``BBoxAssigner``s in a ``CellList`` nothing calls), this call is the one place the code says what ``construct``'s
parameters hold: here ``rois`` is one Tensor. Read syntactically, block by block (module-level statements, or one
function's body): the instance and the argument must each be bound once in the block before the call, to
``Cls(...)`` and to a Tensor constructor or a creation op (``ms.Tensor(...)``, ``ops.ones(...)``); ``Cls`` must be
bound once in the module and not in the function; and every script call of the Cell that passes the parameter
must pass such a Tensor. Like a graph caller's, this is weaker evidence than the code of ``construct`` itself, so
a finding that rests on it gets no fix.

``kept_out_of_graph`` answers the "no graph code can reach it" part for one module of the project.
"""
from __future__ import annotations

from typing import Callable, Dict, List, Optional, Set, Tuple

import libcst as cst

from ms_lint.analysis.dataflow import statement_bindings
from ms_lint.analysis.values import SINGLE_TENSOR_BUILDERS
from ms_lint.cstutil import bind_arguments, main_guard, walk_statements
from ms_lint.names import ImportTable
from ms_lint.treememo import tree_memo
from ms_lint.walk import find, parents_in

# The creation ops of ``ops``/``mint``/``numpy`` that give one Tensor whatever their arguments (not
# ``ops.max_pool2d(..., return_indices=True)``, ``numpy.broadcast_arrays`` or ``numpy.triu_indices``: tuples).
OP_NAMESPACES = ("mindspore.ops.", "mindspore.mint.", "mindspore.numpy.")
CREATION_OPS = frozenset({"ones", "zeros", "ones_like", "zeros_like", "full", "full_like", "fill", "rand", "randn",
                          "rand_like", "randn_like", "randint", "randint_like", "uniform", "normal",
                          "standard_normal", "arange", "linspace", "eye", "array", "asarray"})
# Inner scopes: a call inside reads their own names (a comprehension's target shadows the block's binding).
_INNER_SCOPES = (cst.Lambda, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)

Bound = Dict[str, Tuple[int, cst.BaseExpression]]  # name -> (position of its one binding statement, value)
ScriptCall = Tuple[Optional[cst.FunctionDef], cst.Call, Bound, int]  # (function or None, call, its block, position)


def tensor_from_script(module: cst.Module, imports: ImportTable, class_name: str, construct: cst.FunctionDef,
                       name: str) -> Optional[Tuple[Optional[cst.FunctionDef], cst.Call]]:
    """(the function or None for module level, the call) of a call of an instance of the module-level Cell class
    ``class_name`` in script code that hands ``construct``'s parameter ``name`` one Tensor, when every script call
    that passes the parameter hands it one; None otherwise."""
    found = None
    for function, call, once, position in _script_facts(module).get(class_name, ()):
        binding = bind_arguments(construct, True, call)
        if binding is None:
            return None  # (``net(*inputs)``: what it passes is not read)
        passed = next((value for param, value in binding[0] if param == name), None)
        if passed is None:
            continue
        if type(passed) is cst.Name:
            bound = once.get(passed.value)
            passed = bound[1] if bound is not None and bound[0] < position else None
        if not (type(passed) is cst.Call and _one_tensor(passed, imports)):
            return None  # a script call that passes something else (``net([a, b])``) outweighs the others
        found = found or (function, call)
    return found


@tree_memo
def _script_facts(module: cst.Module) -> Dict[str, List[ScriptCall]]:
    """class name -> the script calls of its instances (``net(x)`` with ``net = Cls(...)`` bound once before, or
    ``Cls(...)(x)``), for the class names the module binds once (a second class, an import, a ``def`` or a swap of
    the name leave it out) and the blocks that do not bind them (a parameter, a local class)."""
    bindings = _module_bindings(module)
    rebound_globally = {item.name.value for node in find(module, cst.Global) for item in node.names}
    found: Dict[str, List[ScriptCall]] = {}
    for function, statements in _script_blocks(module):
        shadowed = _function_bindings(function) if function is not None else set()
        once = _bound_once(function, statements)
        if function is None:
            once = {bound: value for bound, value in once.items() if bound not in rebound_globally}
        for position, stmt in enumerate(statements):
            for call in _calls_of(stmt):
                built = _built_class(call.func, once, position)
                if built is not None and bindings.get(built) == 1 and built not in shadowed:
                    found.setdefault(built, []).append((function, call, once, position))
    return found


def _script_blocks(module: cst.Module) -> List[Tuple[Optional[cst.FunctionDef], List[cst.BaseStatement]]]:
    """(function or None for module level, its statements in source order, nested blocks included, nested defs
    and classes left out) for the module level and each module-level function."""
    blocks: List[Tuple[Optional[cst.FunctionDef], List[cst.BaseStatement]]] = [
        (None, [stmt for stmt in walk_statements(module.body, into_defs=False)
                if not isinstance(stmt, (cst.FunctionDef, cst.ClassDef))])]
    for stmt in module.body:
        if isinstance(stmt, cst.FunctionDef) and isinstance(stmt.body, cst.IndentedBlock):
            blocks.append((stmt, [inner for inner in walk_statements(stmt.body.body, into_defs=False)
                                  if not isinstance(inner, (cst.FunctionDef, cst.ClassDef))]))
    return blocks


def _calls_of(stmt: cst.BaseStatement) -> List[cst.Call]:
    """The calls a statement makes itself (for a compound statement, in its header), not in nested blocks nor in
    lambdas and comprehensions."""
    if isinstance(stmt, cst.SimpleStatementLine):
        found = find(stmt, cst.Call, prune=_INNER_SCOPES)
    else:
        header = getattr(stmt, "test", None) or getattr(stmt, "iter", None)
        found = find(header, cst.Call, prune=_INNER_SCOPES) if header is not None else []
    return [call for call in found if type(call) is cst.Call]


def _module_bindings(module: cst.Module) -> Dict[str, int]:
    """How many module-level statements bind each name (class and function definitions, imports and
    assignments in nested blocks included), a name some function declares ``global`` once more."""
    counts: Dict[str, int] = {}
    for stmt in walk_statements(module.body, into_defs=False):
        for bound in statement_bindings(stmt):
            counts[bound] = counts.get(bound, 0) + 1
    for node in find(module, cst.Global):
        for item in node.names:
            counts[item.name.value] = counts.get(item.name.value, 0) + 1
    return counts


def _function_bindings(function: cst.FunctionDef) -> Set[str]:
    """Every name the function binds: its parameters and what its body binds, nested definitions' names and
    insides included (over-counting only loses evidence)."""
    names = {param.name.value for param in find(function.params, cst.Param)}
    for stmt in walk_statements(function.body.body if isinstance(function.body, cst.IndentedBlock) else ()):
        names.update(statement_bindings(stmt))
    return names


def _bound_once(function: Optional[cst.FunctionDef], statements: List[cst.BaseStatement]) -> Bound:
    """The names the block binds exactly once, by a plain ``name = value``, and that are not parameters of the
    function."""
    counts: Dict[str, int] = {}
    values: Bound = {}
    if function is not None:
        for param in find(function.params, cst.Param):
            counts[param.name.value] = 2
    for position, stmt in enumerate(statements):
        for bound in statement_bindings(stmt):
            counts[bound] = counts.get(bound, 0) + 1
        for small in stmt.body if isinstance(stmt, cst.SimpleStatementLine) else ():
            if (isinstance(small, cst.Assign) and len(small.targets) == 1
                    and isinstance(small.targets[0].target, cst.Name)):
                values[small.targets[0].target.value] = (position, small.value)
    return {bound: value for bound, value in values.items() if counts.get(bound) == 1}


def _built_class(func: cst.BaseExpression, once: Bound, position: int) -> Optional[str]:
    """``net(...)`` with ``net = Cls(...)`` bound once before, or ``Cls(...)(...)``: ``Cls``."""
    if type(func) is cst.Name:
        found = once.get(func.value)
        if found is None or found[0] >= position:
            return None
        func = found[1]
    if type(func) is cst.Call and type(func.func) is cst.Name:
        return func.func.value
    return None


def _one_tensor(call: cst.Call, imports: ImportTable) -> bool:
    qualified = imports.qualify(call.func)
    if qualified is None:
        return False
    if qualified in SINGLE_TENSOR_BUILDERS:
        return True
    head, _, last = qualified.rpartition(".")
    return f"{head}." in OP_NAMESPACES and last in CREATION_OPS


# -- where the instances of a class go -----------------------------------------------------------------------------
# What a list of cells may be wrapped in on its way to an attribute of ``self``.
CELL_CONTAINERS = frozenset({"mindspore.nn.CellList", "mindspore.nn.SequentialCell", "list", "tuple"})


def kept_out_of_graph(module: cst.Module, imports: ImportTable, class_name: str, defined_here: bool,
                      script_function: Callable[[str], bool]) -> Optional[Set[Tuple[str, str]]]:
    """Where this module puts the instances of the class it names ``class_name``: the (class, attribute) pairs of
    ``self.attr`` that may hold one, when every mention of the name is an import of it, a construction in a method
    whose result only goes into ``self.attr`` (directly, or through a local list filled by ``append``/``extend``
    and wrapped in an ``nn.CellList``/``nn.SequentialCell``), or, in the module that defines it (``defined_here``),
    its own ``class`` statement and its script code: the ``if __name__ == "__main__":`` block, and module
    functions that ``script_function`` accepts (no graph code, no other module names them) and only that block
    calls;
    ``__all__`` may list it. None when a mention goes anywhere else (a factory's return, an argument, a registry,
    a string, module-level code, a subclass)."""
    held: Set[Tuple[str, str]] = set()
    parents = parents_in(module)
    for mention in _mentions(module, class_name):
        if not isinstance(mention, cst.Name):
            if _in_all(mention, parents):
                continue  # ``__all__ = ["Cls"]``: other modules' uses are read in their own text
            return None  # a string that names it: a registry by name
        imported = _import_alias(mention, parents)
        if imported is not None:
            if imported.asname is not None:
                return None  # (``import ... as X``: its uses are spelled otherwise)
            continue
        if defined_here and isinstance(parents.get(mention), cst.ClassDef) and parents[mention].name is mention:
            continue
        if _type_argument(mention, parents):
            continue  # ``super(Cls, self)``, ``isinstance(x, Cls)``: no instance goes anywhere
        method, owner = _enclosing_method(mention, parents)
        if method is None:
            function = _enclosing_function(mention, parents)
            if defined_here and function is None and _under_main(mention, module, parents):
                continue  # the ``if __name__ == "__main__":`` block of the module that defines the class
            if (defined_here and function is not None and parents.get(function) is module
                    and _called_only_under_main(module, function.name.value, parents)
                    and script_function(function.name.value)):
                continue  # a smoke-test function only that block calls
            return None
        call = parents.get(mention)
        if not (isinstance(call, cst.Call) and call.func is mention):
            return None  # (``registry["a"] = Cls``, ``build(Cls)``: not followed)
        attributes = _flows_to_attributes(call, method, parents, imports)
        if attributes is None:
            return None
        held.update((owner, attr) for attr in attributes)
    return held


def attribute_read_outside_init(module: cst.Module, owner: str, attr: str) -> bool:
    """Does any function of the module other than ``owner``'s ``__init__`` read ``self.<attr>``?"""
    parents = parents_in(module)
    for node in find(module, cst.Attribute):
        if (node.attr.value == attr and type(node.value) is cst.Name and node.value.value == "self"):
            method, found_owner = _enclosing_method(node, parents)
            if method is None or not (found_owner == owner and method.name.value == "__init__"):
                return True
    return False


def _mentions(module: cst.Module, class_name: str) -> List[cst.CSTNode]:
    """Every ``Name`` or attribute name spelled ``class_name``, and every string that holds it (a registry by
    name): a string mention is returned as the string node itself, which no caller accepts."""
    found: List[cst.CSTNode] = [node for node in find(module, cst.Name) if node.value == class_name]
    found += [node for node in find(module, (cst.SimpleString, cst.FormattedStringText))
              if class_name in (node.value if isinstance(node, cst.FormattedStringText) else node.value)]
    return found


def _in_all(node: cst.CSTNode, parents) -> bool:
    """A string in a module-level ``__all__ = [...]`` (or ``+=``)."""
    while node is not None and not isinstance(node, cst.BaseStatement):
        if isinstance(node, (cst.Assign, cst.AugAssign)):
            targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
            return all(type(t) is cst.Name and t.value == "__all__" for t in targets)
        node = parents.get(node)
    return False


def _under_main(node: cst.CSTNode, module: cst.Module, parents) -> bool:
    """``node`` sits in the module's top-level ``if __name__ == "__main__":`` block (``cstutil.main_guard``)."""
    guard = main_guard(module)
    while node is not None and guard is not None:
        if node is guard:
            return True
        node = parents.get(node)
    return False


def _called_only_under_main(module: cst.Module, name: str, parents) -> bool:
    """The module names its function ``name`` only in its ``def`` and in ``if __name__ == "__main__":`` blocks."""
    for node in find(module, cst.Name):
        if node.value != name:
            continue
        holder = parents.get(node)
        if isinstance(holder, cst.FunctionDef) and holder.name is node and parents.get(holder) is module:
            continue
        if isinstance(holder, cst.Attribute) and holder.attr is node:
            continue
        if not _under_main(node, module, parents):
            return False
    return True


def _import_alias(node: cst.CSTNode, parents: Dict[cst.CSTNode, cst.CSTNode]) -> Optional[cst.ImportAlias]:
    """The ``import`` clause that names ``node``, or None."""
    while node is not None and not isinstance(node, cst.BaseStatement):
        if isinstance(node, cst.ImportAlias):
            return node
        node = parents.get(node)
    return None


def _type_argument(node: cst.CSTNode, parents: Dict[cst.CSTNode, cst.CSTNode]) -> bool:
    """``node`` is ``super``'s first argument or ``isinstance``/``issubclass``'s second (or in its tuple)."""
    arg = parents.get(node)
    if isinstance(arg, cst.Element):
        arg = parents.get(parents.get(arg))  # (``isinstance(x, (A, Cls))``: the tuple's argument)
    call = parents.get(arg) if isinstance(arg, cst.Arg) else None
    if not (isinstance(call, cst.Call) and type(call.func) is cst.Name and arg.keyword is None):
        return False
    position = next((i for i, candidate in enumerate(call.args) if candidate is arg), -1)
    return (call.func.value == "super" and position == 0) or (
        call.func.value in ("isinstance", "issubclass") and position == 1)


def _enclosing_function(node: cst.CSTNode, parents) -> Optional[cst.FunctionDef]:
    node = parents.get(node)
    while node is not None and not isinstance(node, cst.FunctionDef):
        node = parents.get(node)
    return node


def _enclosing_method(node: cst.CSTNode, parents) -> Tuple[Optional[cst.FunctionDef], Optional[str]]:
    """(the method of a module-level class that holds ``node``, directly in its body; the class's name)."""
    function = _enclosing_function(node, parents)
    if function is None or _enclosing_function(function, parents) is not None:
        return None, None
    body = parents.get(function)
    owner = parents.get(body) if isinstance(body, cst.IndentedBlock) else None
    if isinstance(owner, cst.ClassDef) and isinstance(parents.get(owner), cst.Module):
        return function, owner.name.value
    return None, None


def _flows_to_attributes(call: cst.Call, method: cst.FunctionDef, parents, imports: ImportTable
                         ) -> Optional[Set[str]]:
    """The attributes of ``self`` the construction ``call`` in ``method`` may end up in: ``self.a = Cls(...)``,
    ``cells.append(Cls(...))`` / ``cells = [Cls(...), ...]`` then ``self.a = nn.CellList(cells)``; None when it
    may go anywhere else."""
    attributes: Set[str] = set()
    locals_: Set[str] = set()  # local names the instance went into, and those whose uses are queued
    scanned: Set[str] = set()
    pending: List[cst.CSTNode] = [call]
    seen: Set[int] = set()
    while pending:
        value = pending.pop()
        if id(value) in seen:
            continue
        seen.add(id(value))
        node, parent = value, parents.get(value)
        while isinstance(parent, (cst.Element, cst.List, cst.Tuple, cst.Arg)) or (
                isinstance(parent, cst.Call) and node is not parent.func and _container_call(parent, imports)):
            node, parent = parent, parents.get(parent)
        if isinstance(parent, cst.Call) and isinstance(parent.func, cst.Attribute) and node is not parent.func \
                and parent.func.attr.value in ("append", "extend", "insert") and type(parent.func.value) is cst.Name:
            locals_.add(parent.func.value.value)
        elif isinstance(parent, (cst.Assign, cst.AnnAssign, cst.AugAssign)) and node is parent.value:
            targets = [t.target for t in parent.targets] if isinstance(parent, cst.Assign) else [parent.target]
            if len(targets) != 1:
                return None
            target = targets[0]
            if type(target) is cst.Attribute and type(target.value) is cst.Name and target.value.value == "self":
                attributes.add(target.attr.value)
            elif type(target) is cst.Name:
                locals_.add(target.value)
            else:
                return None
        else:
            return None
        for name in sorted(locals_ - scanned):
            scanned.add(name)
            for use in find(method, cst.Name):
                if use.value == name and id(use) not in seen and not _bound_here(use, parents):
                    holder = parents.get(use)
                    if (isinstance(holder, cst.Attribute) and holder.attr is use) or (
                            isinstance(holder, cst.Arg) and holder.keyword is use):
                        continue  # (``self.cells``, ``f(cells=...)``: another name spelled the same)
                    if (isinstance(holder, cst.Attribute) and holder.value is use
                            and holder.attr.value in ("append", "extend", "insert")
                            and isinstance(parents.get(holder), cst.Call) and parents[holder].func is holder):
                        seen.add(id(use))  # ``cells.append(...)``: the list grows; where it goes is its name's use
                        continue  # (``cells.pop()``, ``cells[0]`` take an item out: followed, and refused)
                    pending.append(use)
    return attributes


def _bound_here(name: cst.Name, parents) -> bool:
    """``name`` is (part of) an assignment's target (``cells = []``, ``a, cells = [], []``): a binding, not a use.
    (A binding of the list to something else loses nothing: the uses of that name are not followed, and each use
    of this one is.)"""
    child, node = name, parents.get(name)
    while isinstance(node, (cst.Element, cst.Tuple, cst.List, cst.StarredElement)):
        child, node = node, parents.get(node)
    return isinstance(node, cst.AssignTarget) and node.target is child


def _container_call(call: cst.Call, imports: ImportTable) -> bool:
    """``nn.CellList(cells)``, ``nn.SequentialCell(cells)``, ``list(cells)``, ``tuple(cells)``."""
    qualified = imports.qualify(call.func)
    if qualified is None and type(call.func) is cst.Name:
        qualified = call.func.value
    return qualified in CELL_CONTAINERS
