"""Writes a pathological .poly file to stdout, for the front end's robustness tests.

Usage: nasty.py KIND. Each kind is one way that input could make a parser crash, recurse without
bound, hang or print megabytes; the tests expect a clean error and exit status 1 instead.
"""
import random
import sys

HEAD = b"param N;\noutput f32 y[N];\n"


def main() -> None:
    kind = sys.argv[1]
    out = sys.stdout.buffer
    if kind == "deep-parens":
        out.write(HEAD + b"y[i] = " + b"(" * 100000 + b"1" + b")" * 100000 + b";\n")
    elif kind == "deep-unclosed":
        out.write(HEAD + b"y[i] = " + b"(" * 100000)
    elif kind == "long-chain":
        out.write(HEAD + b"y[i] = 1" + b" + 1" * 100000 + b";\n")
    elif kind == "deep-unary":
        out.write(HEAD + b"y[i] = " + b"-" * 100000 + b"1;\n")
    elif kind == "deep-brackets":
        out.write(b"param N;\ninput i32 x[N];\noutput f32 y[N];\ny[i] = " + b"x[" * 100000 + b"0" + b"]" * 100000 + b";\n")
    elif kind == "deep-reductions":
        body = b"".join(b"sum(k%d in 0..N) " % d for d in range(5000))
        out.write(HEAD + b"y[i] = " + body + b"1;\n")
    elif kind == "deep-ok":
        # 200 levels: under the limit of 256, so this one is valid.
        out.write(HEAD + b"y[i] = " + b"(" * 200 + b"1" + b" + 1)" * 200 + b";\n")
    elif kind == "long-identifier":
        out.write(b"param " + b"a" * (1 << 20) + b";\n")
    elif kind == "identifier-257":
        out.write(b"param " + b"b" * 257 + b";\n")
    elif kind == "identifier-256":
        out.write(b"param " + b"c" * 256 + b";\noutput f32 y[" + b"c" * 256 + b"];\ny[i] = 1;\n")
    elif kind == "nul":
        out.write(b"param N;\x00\x00\noutput f32 y[N];\ny[i] = 1;\n")
    elif kind == "invalid-utf8":
        out.write(b"param N;\noutput f32 y[N];\ny[i] = \xff\xfe 1;\n")
    elif kind == "invalid-utf8-comment":
        out.write(b"// a comment with a bad byte \xc3\x28 in it\nparam N;\n")
    elif kind == "utf8-outside-comment":
        out.write("param N;\noutput f32 y[N];\ny[i] = 1 \u00d7 2;\n".encode())
    elif kind == "big-int":
        out.write(HEAD + b"y[i] = 99999999999999999999999;\n")
    elif kind == "big-float":
        out.write(HEAD + b"y[i] = 1e999;\n")
    elif kind == "garbage":
        rng = random.Random(1234)
        out.write(bytes(rng.randrange(256) for _ in range(100000)))
    elif kind == "many-errors":
        out.write(b"param N;\n" + b"y[i] = 1;\n" * 100)
    elif kind == "huge":
        # 16 MiB of comment and then one byte more: over the limit.
        line = b"// " + b"x" * 1020 + b"\n"
        out.write(line * (16 * 1024) + b"\n")
    elif kind == "many-equations":
        # 30000 one-element equations exceed the isl operation budget of the exactly-once check.
        n = 30000
        out.write(b"output f32 y[%d];\n" % n + b"".join(b"y[%d] = 1;\n" % i for i in range(n)))
    elif kind == "crlf":
        # Windows line ends, tabs and form feeds are white space: a valid program.
        out.write(b"param N;\r\n\toutput f32 y[N];\r\n\x0cy[i] =\t1; // done\r\n")
    elif kind == "control":
        out.write(b"param N;\noutput f32 y[N];\ny[i] = 1\x01\x02;\n")
    elif kind == "many-params":
        # 200000 params: the exactly-once check must not make every isl set that wide.
        n = 200000
        names = b", ".join(b"p%d" % i for i in range(n))
        out.write(b"param " + names + b";\noutput f32 y[p7, p199999];\ny[i, j] = 1 where i < p3;\n"
                  b"y[i, j] = 2 where i >= p3;\n")
    elif kind == "empty":
        pass
    elif kind == "only-comments":
        out.write(b"// nothing here\n/* nor here */\n   \n\t\n")
    elif kind == "long-line-error":
        out.write(b"param N;\n" + b" " * 5000 + b"@" + b" " * 5000 + b"\n")
    else:
        sys.exit("unknown kind " + kind)


if __name__ == "__main__":
    main()
