#!/usr/bin/env python3
"""Runs the Java test programs on jitlock-java and checks them.

Each programs/NAME.java is compiled (by CMake) into BUILD/classes. Run with
the VM options after `--`, every program must print exactly
programs/NAME.expected on stdout and exit with the status its header names
(default 0). With --java, each program also runs on the JDK's `java`, which
must produce the same: that keeps the expected files honest.

Header lines in a program (// KEY: value, before the first class):
  STATUS: N         the exit status (default 0)
  ARGS: a b         program arguments
  VM-ARGS: ...      extra jitlock-java options (e.g. --heap=16m)
  STDERR: text      stderr must contain this (jitlock-java and java)
  NO-JAVA: why      do not run it on java (its behaviour depends on VM
                    options java does not share)

--bad-input runs the corpus of bad inputs instead: each must give a
diagnostic and a nonzero status, never a crash (a signal) or a hang.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

TIMEOUT = 120


def run(cmd, timeout=TIMEOUT):
    start = time.time()
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, '', 'timed out after %d s' % timeout, time.time() - start
    return (p.returncode, p.stdout.decode('utf-8', 'replace'),
            p.stderr.decode('utf-8', 'replace'), time.time() - start)


def headers(path):
    h = {}
    with open(path, encoding='utf-8') as f:
        for line in f:
            m = re.match(r'\s*//\s*([A-Z-]+):\s*(.*)$', line)
            if m:
                h[m.group(1)] = m.group(2).strip()
            elif re.match(r'\s*(public\s+)?(final\s+)?(class|interface|enum)',
                          line):
                break
    return h


def check(label, got, want_out, want_status, want_stderr):
    status, out, err, secs = got
    problems = []
    if status is None:
        problems.append(err)
    else:
        if status < 0:
            problems.append('killed by signal %d' % -status)
        elif status != want_status:
            problems.append('exit status %d, expected %d' %
                            (status, want_status))
        if out != want_out:
            problems.append('stdout differs from the expected file')
        if want_stderr and want_stderr not in err:
            problems.append('stderr lacks %r' % want_stderr)
    if problems:
        print('FAIL %s (%.1f s): %s' % (label, secs, '; '.join(problems)))
        if status is not None and out != want_out:
            print('--- expected stdout\n%s--- actual stdout\n%s---' %
                  (want_out, out))
        print('--- stderr\n%s---' % err[-3000:])
        return False
    print('ok   %s (%.1f s)' % (label, secs))
    return True


def programs(args):
    classes = os.path.join(args.build, 'classes')
    names = sorted(f[:-5] for f in os.listdir(os.path.join(args.src,
                                                           'programs'))
                   if f.endswith('.java'))
    if args.filter:
        names = [n for n in names if re.search(args.filter, n)]
    ok = True
    for name in names:
        src = os.path.join(args.src, 'programs', name + '.java')
        h = headers(src)
        with open(os.path.join(args.src, 'programs', name + '.expected'),
                  encoding='utf-8') as f:
            want = f.read()
        status = int(h.get('STATUS', '0'))
        prog_args = h.get('ARGS', '').split()
        vm_args = h.get('VM-ARGS', '').split()
        stderr = h.get('STDERR')
        cmd = ([args.vm] + args.vm_args + vm_args + ['-cp', classes, name] +
               prog_args)
        ok &= check('%s %s' % (name, ' '.join(args.vm_args)), run(cmd), want,
                    status, stderr)
        if args.java and 'NO-JAVA' not in h:
            ok &= check('%s on java' % name,
                        run([args.java, '-Xss4m', '-cp', classes, name] +
                            prog_args),
                        want, status, stderr)
    return ok


def bad_input(args):
    """Each case: (label, classpath, class, stderr must contain)."""
    bad = os.path.join(args.build, 'bad-classes')
    good = os.path.join(args.build, 'classes')
    tmp = tempfile.mkdtemp(prefix='jitlock-java-bad-')
    try:
        with open(os.path.join(bad, 'Floats.class'), 'rb') as f:
            sample = f.read()

        def variant(name, data, cls='Floats'):
            d = os.path.join(tmp, name)
            os.makedirs(d)
            with open(os.path.join(d, cls + '.class'), 'wb') as f:
                f.write(data)
            return d

        # Confused.main: getstatic lock; dup; astore_1; monitorenter.
        with open(os.path.join(bad, 'Confused.class'), 'rb') as f:
            confused = f.read()
        shape = re.compile(b'\xb2..\x59\x4c\xc2', re.S)
        assert shape.search(confused), 'unexpected code in Confused'
        # An int where the lock should be, and a missing value.
        int_lock = shape.sub(b'\x03\x00\x00\x59\x4c\xc2', confused, 1)
        underflow = shape.sub(lambda m: m.group(0)[:3] + b'\x00\x4c\xc2',
                              confused, 1)

        # The constant pool starts at byte 10; its first entry of javac's
        # is a Methodref (tag 10) whose class index is at bytes 11..12.
        assert sample[10] == 10, 'unexpected first constant'
        bad_index = bytearray(sample)
        bad_index[11:13] = b'\xff\xf0'
        cases = [
            ('truncated class file', variant('trunc', sample[:len(sample) // 2]),
             'Floats', 'truncated class file'),
            ('empty class file', variant('empty', b''), 'Floats',
             'truncated class file'),
            ('bad magic', variant('magic', b'\xca\xfe\xba\xbf' + sample[4:]),
             'Floats', 'bad magic'),
            ('bad constant-pool index', variant('cpindex', bytes(bad_index)),
             'Floats', 'bad constant-pool index'),
            ('trailing bytes', variant('trailing', sample + b'\0'), 'Floats',
             'trailing bytes'),
            ('synchronized on an int',
             variant('intlock', int_lock, 'Confused'), 'Confused',
             'expects a reference'),
            ('operand stack underflow',
             variant('underflow', underflow, 'Confused'), 'Confused',
             'on the operand stack'),
            ('missing main class', good, 'NoSuchClass', 'not found'),
            ('no main method', bad, 'NoMain', 'has no method'),
            ('unsupported bytecode (float)', bad, 'Floats', 'bytecode'),
            ('library class outside the subset', bad, 'UsesArrayList',
             'built-in library'),
            ('library method outside the subset', bad, 'UsesStringRepeat',
             'built-in library'),
            ('serializable lambda (another bootstrap)', bad,
             'UsesSerializableLambda', 'built-in library'),
        ]
        ok = True
        for label, cp, cls, text in cases:
            status, out, err, secs = run([args.vm, '-Xint', '-cp', cp, cls],
                                         timeout=60)
            problems = []
            if status is None:
                problems.append('timed out')
            elif status < 0:
                problems.append('killed by signal %d' % -status)
            elif status != 2:
                problems.append('exit status %d, expected 2' % status)
            if text not in err:
                problems.append('stderr lacks %r' % text)
            if 'jitlock-java: error:' not in err:
                problems.append('no "jitlock-java: error:" diagnostic')
            if problems:
                print('FAIL %s: %s\n--- stderr\n%s---' %
                      (label, '; '.join(problems), err))
                ok = False
            else:
                print('ok   %s: %s' % (label, err.strip().splitlines()[-1]))
        # Usage errors: status 2 with a diagnostic too.
        usage = [
            ('no main class given', []),
            ('bad --monitors', ['--monitors=bogus', '-cp', good, 'Exit']),
            ('bad --exit', ['--exit=maybe', '-cp', good, 'Exit']),
            ('bad --heap', ['--heap=12q', '-cp', good, 'Exit']),
            ('bad -Xss', ['-Xss1k', '-cp', good, 'Exit']),
            ('bad --safepoint-every', ['--safepoint-every=0', '-cp', good,
                                       'Exit']),
            ('-Xint with -Xcomp', ['-Xint', '-Xcomp', '-cp', good, 'Exit']),
            ('unknown option', ['--no-such-option', '-cp', good, 'Exit']),
        ]
        for label, argv in usage:
            status, out, err, secs = run([args.vm] + argv, timeout=60)
            if status == 2 and 'jitlock-java: error:' in err:
                print('ok   usage: %s: %s' % (label, err.strip().splitlines()[0]))
            else:
                print('FAIL usage: %s: status %s\n--- stderr\n%s---' %
                      (label, status, err))
                ok = False
        # NoSuchMethodError is thrown when the call runs, as in the JVM.
        nsm = os.path.join(args.build, 'nosuchmethod')
        for vm in [[args.vm, '-Xint']] + ([[args.java]] if args.java else []):
            status, out, err, secs = run(vm + ['-cp', nsm, 'Main'], timeout=60)
            label = 'NoSuchMethodError on ' + os.path.basename(vm[0])
            if (status == 1 and 'java.lang.NoSuchMethodError' in err and
                    out == 'before\n'):
                print('ok   %s' % label)
            else:
                print('FAIL %s: status %s\n--- stdout\n%s--- stderr\n%s---' %
                      (label, status, out, err))
                ok = False
        return ok
    finally:
        shutil.rmtree(tmp)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--vm', required=True)
    ap.add_argument('--java')
    ap.add_argument('--build', required=True)
    ap.add_argument('--src', required=True)
    ap.add_argument('--filter')
    ap.add_argument('--bad-input', action='store_true')
    ap.add_argument('vm_args', nargs='*')
    args = ap.parse_args()
    ok = bad_input(args) if args.bad_input else programs(args)
    print('all passed' if ok else 'FAILURES')
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
