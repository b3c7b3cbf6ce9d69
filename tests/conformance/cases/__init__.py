"""Every family's cases. A family is one module here defining CASES (a list of table.Case)
and, where ops are deliberately left without a case, UNCOVERED: op name -> reason."""

import importlib
import pkgutil


def families():
    """Family name -> module, sorted by name."""
    out = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        out[info.name] = importlib.import_module(__name__ + "." + info.name)
    return out


def cases_by_family():
    """Family -> list of cases; case ids are unique across the table."""
    out, seen = {}, {}
    for fam, mod in families().items():
        out[fam] = list(mod.CASES)
        for c in out[fam]:
            if c.id in seen:
                raise ValueError("case %s defined twice (%s, %s)" % (c.id, seen[c.id], fam))
            seen[c.id] = fam
    return out
