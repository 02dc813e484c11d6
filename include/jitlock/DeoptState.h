/*===- jitlock/DeoptState.h - The monitors of a frame at a deopt point -----===*
 *
 * The encoding shared by the compiler side (the jitlock-deopt-state pass,
 * which appends it) and the deopt runtime (which reads it from the stack
 * map). Plain C: no LLVM, usable from C and C++.
 *
 * At each deopt point (a call with a "deopt" operand bundle, including
 * llvm.experimental.deoptimize) jitlock appends one group to the bundle,
 * after the frontend's own operands, as its last operands:
 *
 *   i32 JITLOCK_DEOPT_MONITORS_MARKER
 *   i32 N                    the frame's monitors at that point
 *   N times:  ptr obj        the object (in the frontend's address space)
 *             i32 kind       jitlock_relock_kind: 0 held, 1 elided
 *
 * The N pairs list the frame's monitors outermost first, exactly the list
 * jitlock_rt_restore_locks takes; a recursive hold is one pair per
 * acquisition. A point whose frame holds no monitor has the group with
 * N = 0, so that "none" differs from "not described". In the stack map
 * record of the call the group's locations are the last 2 + 2 * N of the
 * deopt locations: constants for the marker, the count and the kinds, and
 * wherever the object lives for each object.
 *
 *===----------------------------------------------------------------------===*/
#ifndef JITLOCK_DEOPTSTATE_H
#define JITLOCK_DEOPTSTATE_H

#include "jitlock/jitlock_rt.h"

/* "JLM1": distinct from any small count or kind. */
#define JITLOCK_DEOPT_MONITORS_MARKER 0x4a4c4d31u

/* The operands before the pairs (marker, count), and per pair. */
#define JITLOCK_DEOPT_MONITORS_HEADER_OPERANDS 2u
#define JITLOCK_DEOPT_MONITOR_PAIR_OPERANDS 2u

#endif
