# RUN: mxmoe-compile %mxmoe_src_root/test/Integration/swiglu_experts.mlir --chip sm_90a --recipe mx128 -o %t.out
# RUN: %python %s %mxmoe_src_root %t.out
"""mxmoe.program.memory_plan: the intermediates of a launch program share a
workspace where their lives (first to last binding step) do not overlap;
returned buffers and unbound ones are allocated on their own; a buffer the
run zero-fills lives from step 0. Checked on hand-made programs and on
every program of a real compile (no two live-overlapping buffers share a
byte; the experts block's backward needs less than the sum of its
intermediates)."""
import json
import os
import sys
import unittest

ROOT, OUT = sys.argv.pop(1), sys.argv.pop(1)
sys.path.insert(0, os.path.join(ROOT, "python"))
from mxmoe.program import buffer_lives, memory_plan  # noqa: E402

KIB = 1024


def program(sizes, steps, returns=(), zero=()):
    return {"buffers": [dict(bytes=b, **({"zero": True} if i in zero else {}))
                        for i, b in enumerate(sizes)],
            "steps": [{"bindings": [{"buffer": j} for j in s] + [{"value": 1}]} for s in steps],
            "returns": [{"buffer": r} for r in returns]}


def lives(prog):
    first, last = {}, {}
    for i, s in enumerate(prog["steps"]):
        for b in s["bindings"]:
            if "buffer" in b:
                first.setdefault(b["buffer"], i)
                last[b["buffer"]] = i
    for j, b in enumerate(prog["buffers"]):
        if b.get("zero") and j in first:
            first[j] = 0
    return first, last


def assert_disjoint(test, prog, offsets, align=1024):
    first, last = lives(prog)
    placed = [j for j, o in enumerate(offsets) if o is not None]
    for a in placed:
        test.assertEqual(offsets[a] % align, 0)
        for b in placed:
            if a < b and first[a] <= last[b] and first[b] <= last[a]:
                ea = offsets[a] + prog["buffers"][a]["bytes"]
                eb = offsets[b] + prog["buffers"][b]["bytes"]
                test.assertTrue(ea <= offsets[b] or eb <= offsets[a],
                                f"buffers {a} and {b} overlap while both live")


def loop_program(sizes, before, body, count=3):
    step = lambda s: {"bindings": [{"buffer": j} for j in s]}
    return {"buffers": [dict(bytes=b) for b in sizes], "returns": [],
            "steps": [step(s) for s in before] +
                     [{"loop": {"count": count, "steps": [step(s) for s in body]}}]}


class MemoryPlan(unittest.TestCase):
    def test_loop_body_buffers(self):
        # 0: written before the loop, read by every iteration (a hoisted
        # weight quantization); 1 and 3 live in disjoint steps of one body
        # (they share bytes); 2 is read by the body's last step, so it
        # lives with both.
        p = loop_program([8 * KIB, 4 * KIB, 4 * KIB, 4 * KIB], [[0]],
                         [[0, 1], [1, 2], [2, 3]])
        lives = buffer_lives(p)
        self.assertEqual(lives, [(0, 3), (1, 2), (2, 3), (3, 3)])
        work, off = memory_plan(p)
        self.assertEqual(off[1], off[3])
        self.assertTrue(off[0] >= off[2] + 4 * KIB or off[2] >= off[0] + 8 * KIB)
        for j in (1, 2, 3):
            self.assertTrue(off[j] >= off[0] + 8 * KIB or off[0] >= off[j] + 4 * KIB)
        self.assertEqual(work, 16 * KIB)

    def test_loop_carried_buffers_keep_their_bytes(self):
        # 0 is zero-filled and read by every iteration, 2 is a sum updated
        # in place (bound twice by one step), 4 is marked loop_carried: each
        # lives through the whole loop; 1 and 3 are per-iteration.
        p = loop_program([1 * KIB] * 5, [], [[0, 1], [1], [2, 2, 1], [3, 4]])
        p["buffers"][0]["zero"] = True
        p["buffers"][4]["loop_carried"] = True
        self.assertEqual(buffer_lives(p), [(0, 3), (0, 2), (0, 3), (3, 3), (0, 3)])
        work, off = memory_plan(p)
        for a in (0, 2, 4):
            others = [j for j in range(5) if j != a]
            self.assertTrue(all(off[j] != off[a] for j in others), (a, off))
    def test_disjoint_lives_share_bytes(self):
        p = program([4 * KIB, 4 * KIB, 4 * KIB], [[0], [0, 1], [1, 2]], returns=[2])
        work, off = memory_plan(p)
        # 0 lives in steps 0-1 and 1 in 1-2: they overlap; 2 is returned.
        self.assertIsNone(off[2])
        self.assertEqual(work, 8 * KIB)
        assert_disjoint(self, p, off)
        q = program([4 * KIB, 4 * KIB, 1 * KIB], [[0], [1], [2]], returns=[2])
        work, off = memory_plan(q)
        self.assertEqual(off[0], off[1])  # one after the other: same bytes
        self.assertEqual(work, 4 * KIB)

    def test_zero_filled_lives_from_the_start(self):
        p = program([4 * KIB, 4 * KIB, 64], [[0], [1], [2]], returns=[2], zero=[1])
        work, off = memory_plan(p)
        self.assertNotEqual(off[0], off[1])
        self.assertEqual(work, 8 * KIB)

    def test_unbound_buffer_is_its_own(self):
        p = program([4 * KIB, 4 * KIB], [[0]], returns=[])
        _, off = memory_plan(p)
        self.assertIsNone(off[1])

    def test_compiled_programs(self):
        with open(os.path.join(OUT, "manifest.json")) as f:
            progs = {p["function"]: p for p in json.load(f)["programs"]}
        for name, p in progs.items():
            work, off = memory_plan(p)
            assert_disjoint(self, p, off)
            returned = {r["buffer"] for r in p["returns"] if "buffer" in r}
            self.assertTrue(all(off[r] is None for r in returned), name)
        p = progs["block.experts.backward"]
        work, off = memory_plan(p)
        returned = {r["buffer"] for r in p["returns"] if "buffer" in r}
        total = sum(b["bytes"] for j, b in enumerate(p["buffers"]) if j not in returned)
        self.assertLess(work, total)


if __name__ == "__main__":
    unittest.main(verbosity=2)
