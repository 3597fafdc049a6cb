#!/usr/bin/env python3
"""Finds calls whose arguments contain two or more IR-emitting calls.

C++ leaves the evaluation order of function arguments unspecified (GCC
right to left, clang left to right), so `f(b.add(x, y), b.mul(x, z))`
creates the two ops in a compiler-dependent order. This scanner is a
heuristic: a call "emits" when it creates an op (`create<`, `::create(`,
`.create(`) or names a function, method or lambda of the scanned sources
whose body emits (fixpoint), or a function taking a builder.

Usage: check-eval-order.py FILE...   (lists each call site; exit 1 if any)
Fix a site by evaluating the arguments into named locals, in order, before
the call (LLVM Coding Standards do the same).
"""
import re, sys, pathlib

def strip(src):
    # remove comments and string/char literals, keep newlines
    out, i, n = [], 0, len(src)
    while i < n:
        c = src[i]
        if src.startswith('//', i):
            j = src.find('\n', i); j = n if j < 0 else j
            i = j; continue
        if src.startswith('/*', i):
            j = src.find('*/', i + 2); j = n if j < 0 else j + 2
            out.append('\n' * src.count('\n', i, j)); i = j; continue
        if c == 'R' and src.startswith('R"(', i):
            j = src.find(')"', i); out.append('""'); out.append('\n' * src.count('\n', i, j)); i = j + 2; continue
        if c in '"\'':
            j = i + 1
            while j < n and src[j] != c:
                j += 2 if src[j] == '\\' else 1
            out.append(c + c); i = j + 1; continue
        out.append(c); i += 1
    return ''.join(out)

def match_close(s, i, o='(', c=')'):
    d = 0
    for j in range(i, len(s)):
        if s[j] in '([{': d += 1
        elif s[j] in ')]}':
            d -= 1
            if d == 0: return j
    return -1

def split_args(s):
    args, d, cur = [], 0, []
    angle = 0
    for ch in s:
        if ch in '([{': d += 1
        elif ch in ')]}': d -= 1
        if ch == ',' and d == 0:
            args.append(''.join(cur)); cur = []
        else: cur.append(ch)
    if ''.join(cur).strip(): args.append(''.join(cur))
    return args

KW = {'if','for','while','switch','return','sizeof','catch','decltype','static_assert','alignof','defined'}
CREATE = re.compile(r'(\bcreate\s*<|::create\s*\(|\.create\s*\(|->create\s*\()')
CALL = re.compile(r'([A-Za-z_]\w*)\s*(<[^;(){}]*?>)?\s*\(')

# Names that read like calls but construct values, never IR.
NOT_CALLS = {'Value', 'ValueRange', 'Type', 'TypeRange', 'SmallVector',
             'ArrayRef', 'StringRef', 'Attribute', 'function_ref', 'Twine',
             'APInt', 'APFloat', 'Location', 'OpBuilder', 'static_cast',
             'reinterpret_cast', 'int64_t', 'int32_t', 'uint64_t', 'uint32_t'}


def calls_in(text):
    return {m.group(1) for m in CALL.finditer(text)} - NOT_CALLS

def main(paths):
    files = {p: strip(pathlib.Path(p).read_text()) for p in paths}
    bodies = {}  # name -> list of body texts
    defre = re.compile(r'\b([A-Za-z_]\w*)\s*\(([^;{}()]|\([^;{}()]*\))*\)\s*(const\s*)?(override\s*)?(->\s*[\w:<>,\s*&]+)?\{')
    lamre = re.compile(r'\b(?:auto|std::function<[^>]*>)\s+([A-Za-z_]\w*)\s*=\s*\[[^\]]*\]\s*(\([^{;]*?\))?\s*(mutable\s*)?(->\s*[\w:<>,\s*&]+)?\{')
    for p, s in files.items():
        for rx in (defre, lamre):
            for m in rx.finditer(s):
                name = m.group(1)
                if name in KW: continue
                b = m.end() - 1
                e = match_close(s, b)
                if e > 0: bodies.setdefault(name, []).append(s[b:e])
    emit = set()
    builder_params = re.compile(r'(KB|GB|OpBuilder|ImplicitLocOpBuilder|RewriterBase|PatternRewriter|ConversionPatternRewriter|KernelBuilder)\s*&')
    for p, s in files.items():
        for m in re.finditer(r'\b([A-Za-z_]\w*)\s*\(([^;{}()]*)\)', s):
            if builder_params.search(m.group(2)) and m.group(1) not in KW:
                emit.add(m.group(1))
    changed = True
    while changed:
        changed = False
        for name, bl in bodies.items():
            if name in emit: continue
            for b in bl:
                if CREATE.search(b) or (calls_in(b) & emit):
                    emit.add(name); changed = True; break
    emit -= KW
    # scan every call
    hits = []
    for p, s in files.items():
        for m in CALL.finditer(s):
            name = m.group(1)
            if name in KW: continue
            o = m.end() - 1
            e = match_close(s, o)
            if e < 0: continue
            args = split_args(s[o + 1:e])
            em = []
            if re.search(r'function_ref\s*<', s[o + 1:e]):
                continue  # a declaration's parameter list
            for a in args:
                t = a.strip()
                if t.startswith('['): continue  # a lambda: creating it emits nothing
                if CREATE.search(t) or (calls_in(t) & emit):
                    em.append(t)
            if len(em) >= 2:
                line = s.count('\n', 0, m.start()) + 1
                hits.append((p, line, name, em))
    seen = set()
    for p, line, name, em in hits:
        if (p, line, name) in seen: continue
        seen.add((p, line, name))
        print(f'{p}:{line}: {name}(...) has {len(em)} emitting arguments: ' + ' | '.join(' '.join(x.split())[:60] for x in em))
    print(f'{len(seen)} call sites', file=sys.stderr)
    return 1 if seen else 0

if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
