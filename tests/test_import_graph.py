"""No import circles among the project's modules (etc_realformer/, tasks/, synthetic_data/):
every `import` / `from ... import`, at module level or inside a function, that names a project
module is an edge; the test fails naming the modules of each strongly connected group."""

import ast
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGES = ("etc_realformer", "tasks", "synthetic_data")


def _modules():
  """{dotted module name: path} of every .py file under PACKAGES (packages by __init__)."""
  found = {}
  for package in PACKAGES:
    for folder, _, names in os.walk(os.path.join(ROOT, package)):
      for name in names:
        if name.endswith(".py"):
          path = os.path.join(folder, name)
          dotted = os.path.relpath(path, ROOT)[:-3].replace(os.sep, ".")
          found[dotted[:-len(".__init__")] if dotted.endswith(".__init__") else dotted] = path
  return found


def _imports(module, path, known):
  """The project modules `module` imports (package __init__ files excluded as targets)."""
  is_package = path.endswith("__init__.py")
  base_package = module if is_package else module.rpartition(".")[0]
  names = []
  with open(path, encoding="utf-8") as f:
    tree = ast.parse(f.read(), path)
  for node in ast.walk(tree):
    if isinstance(node, ast.Import):
      names += [alias.name for alias in node.names]
    elif isinstance(node, ast.ImportFrom):
      prefix = node.module or ""
      if node.level:
        parts = base_package.split(".")[:len(base_package.split(".")) - node.level + 1]
        prefix = ".".join(parts + ([prefix] if prefix else []))
      names += [prefix] + [f"{prefix}.{alias.name}" for alias in node.names]
  targets = set()
  for name in names:
    while name and name not in known:
      name = name.rpartition(".")[0]
    if name and name != module and not known[name].endswith("__init__.py"):
      targets.add(name)
  return targets


def _cycles(graph):
  """Strongly connected groups of more than one module (Tarjan's algorithm, iterative)."""
  index, low, on_stack, stack, groups, counter = {}, {}, set(), [], [], [0]

  def visit(start):
    work = [(start, iter(sorted(graph[start])))]
    index[start] = low[start] = counter[0]
    counter[0] += 1
    stack.append(start)
    on_stack.add(start)
    while work:
      node, children = work[-1]
      child = next(children, None)
      if child is not None:
        if child not in index:
          index[child] = low[child] = counter[0]
          counter[0] += 1
          stack.append(child)
          on_stack.add(child)
          work.append((child, iter(sorted(graph[child]))))
        elif child in on_stack:
          low[node] = min(low[node], index[child])
        continue
      work.pop()
      if work:
        low[work[-1][0]] = min(low[work[-1][0]], low[node])
      if low[node] == index[node]:
        group = []
        while True:
          member = stack.pop()
          on_stack.discard(member)
          group.append(member)
          if member == node:
            break
        if len(group) > 1:
          groups.append(sorted(group))

  for node in sorted(graph):
    if node not in index:
      visit(node)
  return groups


def test_no_import_circles():
  known = _modules()
  graph = {module: _imports(module, path, known) for module, path in known.items()}
  assert len(graph) > 100
  assert _cycles(graph) == []


def test_the_cycle_finder_finds_a_cycle():
  assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
