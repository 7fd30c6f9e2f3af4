# The .poly program tree the fuzzer generates, renders and shrinks (scripts/fuzz): expressions,
# equations, repeat blocks and declarations, each rendered as docs/language.md spells them.
import copy

PREC_OR, PREC_AND, PREC_CMP, PREC_ADD, PREC_MUL, PREC_UNARY, PREC_ATOM = 1, 2, 3, 4, 5, 6, 7
BIN_PREC = {"||": PREC_OR, "&&": PREC_AND, "<": PREC_CMP, "<=": PREC_CMP, ">": PREC_CMP, ">=": PREC_CMP,
            "==": PREC_CMP, "!=": PREC_CMP, "+": PREC_ADD, "-": PREC_ADD, "*": PREC_MUL, "/": PREC_MUL,
            "%": PREC_MUL}
CMP_OPS = {"<", "<=", ">", ">=", "==", "!="}


class Expr:
    prec = PREC_ATOM

    def render(self):
        raise NotImplementedError

    def __str__(self):
        return self.render()


class Lit(Expr):
    def __init__(self, text):
        self.text = str(text)

    def is_float(self):
        return any(c in self.text for c in ".eE")

    def render(self):
        return self.text


class Var(Expr):
    """A param, const, index variable, scalar array, or function argument."""

    def __init__(self, name):
        self.name = name

    def render(self):
        return self.name


class Read(Expr):
    def __init__(self, name, idx):
        self.name = name
        self.idx = list(idx)

    def render(self):
        if not self.idx:
            return self.name
        return "%s[%s]" % (self.name, ", ".join(e.render() for e in self.idx))


class Sample(Read):
    """sample(A, p1, ..., pn): a read between elements (a Read whose indices are positions)."""
    def render(self):
        return "sample(%s, %s)" % (self.name, ", ".join(e.render() for e in self.idx))


class Bin(Expr):
    def __init__(self, op, a, b):
        self.op, self.a, self.b = op, a, b

    @property
    def prec(self):
        return BIN_PREC[self.op]

    def render(self):
        p = self.prec
        left = self.a.render()
        right = self.b.render()
        # Comparisons do not chain; every other operator is left-associative.
        if self.a.prec < p or (p == PREC_CMP and self.a.prec <= p):
            left = "(" + left + ")"
        if self.b.prec <= p:
            right = "(" + right + ")"
        return "%s %s %s" % (left, self.op, right)


class Un(Expr):
    prec = PREC_UNARY

    def __init__(self, op, a):
        self.op, self.a = op, a

    def render(self):
        inner = self.a.render()
        if self.a.prec < PREC_ATOM or isinstance(self.a, Un) or (isinstance(self.a, Lit) and self.op == "-"
                                                                 and inner.startswith("-")):
            inner = "(" + inner + ")"
        return self.op + inner


class Call(Expr):
    def __init__(self, fn, args):
        self.fn = fn
        self.args = list(args)

    def render(self):
        return "%s(%s)" % (self.fn, ", ".join(a.render() for a in self.args))


class Tup(Expr):
    def __init__(self, elems):
        self.elems = list(elems)

    def render(self):
        return "(%s)" % ", ".join(e.render() for e in self.elems)


class Binding:
    def __init__(self, names, lo, hi):
        self.names = list(names)
        self.lo, self.hi = lo, hi

    def render(self):
        return "%s in %s..%s" % (", ".join(self.names), self.lo.render(), self.hi.render())


class Red(Expr):
    # A reduction extends to the right over a multiplicative expression: as an operand it is always
    # parenthesised (prec 0), and its body is parenthesised unless it is a unary or multiplicative one.
    prec = 0

    def __init__(self, op, binds, where, body):
        self.op = op
        self.binds = list(binds)
        self.where = where
        self.body = body

    def render(self):
        head = ", ".join(b.render() for b in self.binds)
        if self.where is not None:
            head += " where " + self.where.render()
        body = self.body.render()
        if self.body.prec < PREC_MUL:
            body = "(" + body + ")"
        return "%s(%s) %s" % (self.op, head, body)


def subst(expr, mapping):
    """A copy of expr with the variables named in mapping replaced by (copies of) expressions."""
    if isinstance(expr, Var):
        return copy.deepcopy(mapping[expr.name]) if expr.name in mapping else Var(expr.name)
    if isinstance(expr, Lit):
        return Lit(expr.text)
    if isinstance(expr, Read):
        return type(expr)(expr.name, [subst(e, mapping) for e in expr.idx])
    if isinstance(expr, Bin):
        return Bin(expr.op, subst(expr.a, mapping), subst(expr.b, mapping))
    if isinstance(expr, Un):
        return Un(expr.op, subst(expr.a, mapping))
    if isinstance(expr, Call):
        return Call(expr.fn, [subst(a, mapping) for a in expr.args])
    if isinstance(expr, Tup):
        return Tup([subst(e, mapping) for e in expr.elems])
    if isinstance(expr, Red):
        inner = {k: v for k, v in mapping.items() if not any(k in b.names for b in expr.binds)}
        return Red(expr.op, [Binding(b.names, subst(b.lo, mapping), subst(b.hi, mapping)) for b in expr.binds],
                   subst(expr.where, inner) if expr.where is not None else None, subst(expr.body, inner))
    raise TypeError(expr)


def names_in(expr, out=None):
    """Every identifier an expression mentions (variables, arrays read, functions called)."""
    out = set() if out is None else out
    if isinstance(expr, Var):
        out.add(expr.name)
    elif isinstance(expr, Read):
        out.add(expr.name)
        for e in expr.idx:
            names_in(e, out)
    elif isinstance(expr, Bin):
        names_in(expr.a, out)
        names_in(expr.b, out)
    elif isinstance(expr, Un):
        names_in(expr.a, out)
    elif isinstance(expr, Call):
        out.add(expr.fn)
        for a in expr.args:
            names_in(a, out)
    elif isinstance(expr, Tup):
        for e in expr.elems:
            names_in(e, out)
    elif isinstance(expr, Red):
        for b in expr.binds:
            names_in(b.lo, out)
            names_in(b.hi, out)
        if expr.where is not None:
            names_in(expr.where, out)
        names_in(expr.body, out)
    return out


class Equation:
    def __init__(self, name, lhs, op, rhs, where=None, fors=()):
        self.name = name
        self.lhs = list(lhs)  # Var (a fresh index variable), a fixed affine Expr, or a scatter's computed index
        self.op = op  # '=', '+=', '-='
        self.rhs = rhs
        self.where = where
        self.fors = list(fors)  # a scatter's `for` Bindings

    def render(self):
        head = self.name
        if self.lhs:
            head += "[%s]" % ", ".join(e.render() for e in self.lhs)
        text = "%s %s %s" % (head, self.op, self.rhs.render())
        if self.fors:
            text += " for " + ", ".join(b.render() for b in self.fors)
        if self.where is not None:
            text += " where " + self.where.render()
        return text + ";"


class Repeat:
    def __init__(self, var, lo, hi, eqs, until=()):
        self.var, self.lo, self.hi = var, lo, hi
        self.eqs = list(eqs)
        self.until = list(until)  # `until unchanged(...)`: arrays the block updates

    def render(self):
        until = " until unchanged(%s)" % ", ".join(self.until) if self.until else ""
        lines = ["repeat %s in %s..%s%s {" % (self.var, self.lo.render(), self.hi.render(), until)]
        lines += ["  " + e.render() for e in self.eqs]
        lines.append("}")
        return "\n".join(lines)


class ArrayDecl:
    def __init__(self, name, role, ty, shape, boundary=None):
        self.name, self.role, self.ty = name, role, ty
        self.shape = list(shape)  # Exprs
        self.boundary = boundary

    def render(self):
        text = ("%s %s %s" % (self.role, self.ty, self.name)) if self.role != "local" else ("%s %s" % (self.ty, self.name))
        if self.shape:
            text += "[%s]" % ", ".join(e.render() for e in self.shape)
        if self.boundary:
            text += " boundary " + self.boundary
        return text + ";"


class FuncDecl:
    def __init__(self, name, args, body):
        self.name, self.args, self.body = name, list(args), body

    def render(self):
        return "func %s(%s) = %s;" % (self.name, ", ".join(self.args), self.body.render())


class ConstDecl:
    def __init__(self, name, expr):
        self.name, self.expr = name, expr

    def render(self):
        return "const %s = %s;" % (self.name, self.expr.render())


class Program:
    """A whole program: params (with the values this case runs with), consts, the program-wide boundary,
    funcs, arrays and the equations and repeat blocks in textual order."""

    def __init__(self):
        self.params = []  # names
        self.param_values = {}
        self.consts = []  # ConstDecl
        self.boundary = None
        self.funcs = []
        self.arrays = []  # ArrayDecl
        self.items = []  # Equation | Repeat
        self.filename = "prog.poly"
        self.header = []  # comment lines
        self.layout = 0  # how declarations are interleaved (a rendering choice)

    def array(self, name):
        for a in self.arrays:
            if a.name == name:
                return a
        return None

    def equations(self):
        for it in self.items:
            if isinstance(it, Repeat):
                for e in it.eqs:
                    yield e
            else:
                yield it

    def render(self):
        out = ["// " + h for h in self.header]
        if self.params:
            if self.layout == 1 and len(self.params) > 1:
                out += ["param %s;" % p for p in self.params]
            else:
                out.append("param %s;" % ", ".join(self.params))
        out += [c.render() for c in self.consts]
        if self.boundary:
            out.append("boundary %s;" % self.boundary)
        out += [f.render() for f in self.funcs]
        decls = [a.render() for a in self.arrays]
        items = [it.render() for it in self.items]
        if self.layout == 2:
            # Arrays may be used before their declaration: declare them after the equations.
            out += items + decls
        elif self.layout == 3:
            out += decls[::2] + items + decls[1::2]
        else:
            out += decls + items
        return "\n".join(out) + "\n"
