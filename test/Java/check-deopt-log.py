#!/usr/bin/env python3
"""Checks the -Xlog:deopt lines of the Deopt* programs (label deopt).

Each program runs with VM options that make tier 1 speculate and trap (the
options after `--`). For every program, at least the traps listed below must
fire, and right after each one every monitor of the frame must be owned by
the trapping thread, at least as many times as the record lists it. The
DeoptInline* programs trap in inlined callees: some trap must describe the
inline chain (as many frames as listed below). The single-threaded programs
run a second time with --elide=false: the lock state after each trap (the
lock stack and each monitor's owner and holds) must be the same, since a
restored ELIDED lock is a held lock like any other; only the record (its
kinds, its slots' addresses) may differ.

With --reserved (the VM runs --locking=reserved), the traps must between
them
leave some monitor held in state reserved: an object the frame held reserved
stays a reserved hold after the restore, neither revoked nor inflated.

DeoptLazy's threads deoptimize lazily (reason dependency) in an order that
differs from run to run: its traps are compared as a multiset, each trap
with the lines that follow it.
"""
import argparse
import os
import subprocess
import sys

# program: (minimum traps, a restored monitor must have been ELIDED,
#           compare with --elide=false, frames some trap must have);
# DeoptRepeated must also end in tier 0
PROGRAMS = {
    'DeoptRepeated': (4, False, True, 1),
    'DeoptElided': (3, True, True, 1),
    'DeoptNested': (1, False, True, 1),
    'DeoptContended': (1, False, False, 1),
    'DeoptInlineSync': (1, True, True, 2),
    'DeoptInlineLocal': (2, True, True, 2),
    'DeoptInlineDeep': (1, True, True, 4),
    'DeoptInlineContended': (1, True, False, 2),
    'DeoptInlineThrow': (2, True, True, 3),
    'DeoptLazy': (4, True, True, 1),
}
# program: the reason each of its (minimum) traps must have
REASONS = {'DeoptLazy': 'dependency'}
SHAPE_ATTEMPTS = 3
# programs whose traps come in any order
UNORDERED = {'DeoptLazy'}
PREFIX = 'jitlock-java: deopt: '


def deopt_lines(vm, classes, name, vm_args):
    cmd = [vm] + vm_args + ['-Xlog:deopt', '-cp', classes, name]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=120)
    if p.returncode != 0:
        sys.exit('%s: exit status %d\n%s' % (' '.join(cmd), p.returncode,
                                             p.stderr.decode()))
    return [l[len(PREFIX):] for l in p.stderr.decode().splitlines()
            if l.startswith(PREFIX)]


# The runtime's lock stack capacity (jitlock_rt_get_layout's
# lock_stack_capacity on the hosts the tests run on).
LOCK_STACK_CAPACITY = 8


def lock_state(lines, unordered=False):
    """The lines that describe the locks after the restore. With more
    monitors than the lock stack holds, which of them are inflated depends
    on the order they were taken, and the restore takes a frame's elided
    locks after the held ones the code took: only the owners count then.
    With `unordered`, a sorted list of traps (each trap's lines joined)."""
    state = []
    overflow = False
    for l in lines:
        s = l.lstrip()
        if s.startswith('restored'):
            overflow = s.count(',') + 1 > LOCK_STACK_CAPACITY
        if s.startswith(('restored', 'frame')):
            continue
        if overflow and s.startswith('lock stack'):
            continue
        # The state may differ: the restore fast-locks an elided object
        # that the unelided code would have reserved, or (overflow) inflates
        # another object than the unelided run did.
        state.append(l.split(' state ')[0])
    if not unordered:
        return state
    traps = []
    for l in state:
        if ' reason ' in l or not traps:
            traps.append(l)
        else:
            traps[-1] += '\n  ' + l
    return sorted(traps)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--vm', required=True)
    ap.add_argument('--build', required=True)
    ap.add_argument('--reserved', action='store_true',
                    help='the VM options include --locking=reserved')
    ap.add_argument('vm_args', nargs='*')
    args = ap.parse_args()
    classes = os.path.join(args.build, 'classes')
    ok = True
    reserved_holds = 0
    for name, (min_traps, elided, compare, frames) in PROGRAMS.items():
        # Where a contended program's thread traps depends on the scheduler:
        # a run whose traps missed the wanted shape (frames, an elided lock)
        # is run again, at most SHAPE_ATTEMPTS times; a wrong lock state is
        # never retried.
        for attempt in range(1, SHAPE_ATTEMPTS + 1):
            lines = deopt_lines(args.vm, classes, name, args.vm_args)
            traps = [l for l in lines if ' reason ' in l]
            problems = []
            shape = []
            if len(traps) < min_traps:
                problems.append('%d traps, want at least %d' %
                                (len(traps), min_traps))
            listed = []
            for l in lines:
                s = l.strip()
                if s.startswith('restored ['):
                    listed = [m.rsplit(' ', 1)[0]
                              for m in s[len('restored ['):-1].split(', ') if m]
                if not s.startswith('monitor '):
                    continue
                # monitor NAME owner WHO holds N state STATE
                _, obj, _, who, _, holds, _, state = s.split(' ')
                if state == 'reserved':
                    reserved_holds += 1
                if who != 'self':
                    problems.append('not held after the restore: ' + s)
                elif int(holds) < listed.count(obj):
                    problems.append('held %s times after the restore, listed %d '
                                    'times: %s' % (holds, listed.count(obj), s))
            reason = REASONS.get(name)
            if reason and sum((' reason %s ' % reason) in l
                              for l in traps) < min_traps:
                problems.append('fewer than %d traps with reason %s' %
                                (min_traps, reason))
            if name == 'DeoptRepeated' and not any(
                    l.endswith('stays in tier 0') for l in lines):
                problems.append('the method did not stay in tier 0')
            if not any(int(l.rsplit(' frames ', 1)[1]) >= frames
                       for l in traps):
                shape.append('no trap had %d frames' % frames)
            if elided and not any(l.strip().startswith('restored') and
                                  ' elided' in l for l in lines):
                shape.append('no trap restored an elided lock')
            if problems or not shape or attempt == SHAPE_ATTEMPTS:
                problems += shape
                break
        if compare:
            plain = deopt_lines(args.vm, classes, name,
                                args.vm_args + ['--elide=false'])
            unordered = name in UNORDERED
            if lock_state(plain, unordered) != lock_state(lines, unordered):
                problems.append(
                    'the lock state after the traps differs with '
                    '--elide=false:\n  ' +
                    '\n  '.join(lock_state(lines, unordered)) +
                    '\nversus\n  ' +
                    '\n  '.join(lock_state(plain, unordered)))
        for p in problems:
            print('FAIL %s: %s' % (name, p))
        if not problems:
            print('ok %s: %d traps' % (name, len(traps)))
        ok &= not problems
    if args.reserved and not reserved_holds:
        print('FAIL: no monitor was held reserved after a restore')
        ok = False
    print('all passed' if ok else 'FAILURES')
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
