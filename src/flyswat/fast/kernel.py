"""The batched simulation kernel: whole bot games in compiled loops (numba).

This is a second implementation of R5–R24 and of the bots' policy (:func:`flyswat.bots.decide`),
written over flat integer arrays so that numba can compile it. It is checked against the
reference engine in two ways (``tests/test_fast.py``): every game it traces replays through
:class:`flyswat.engine.Game` into a record that passes :func:`flyswat.record.verify_record`,
and its statistics agree with the reference simulator's within their confidence intervals.

Cards are the indices of :data:`flyswat.cards.DECK`: flies 0–95 (colour ``i // 16``, value
:data:`~flyswat.fast.policy.VALUES` ``[i % 16]``), swatters 96–111. The randomness is the
kernel's own generator (:mod:`flyswat.fast.rng`), seeded once per batch: the kernel plays
*like* the reference, not game for game.

Bot parameters arrive as one row per seat (:data:`~flyswat.fast.policy.PARAM_FIELDS`, built
from :class:`flyswat.bots.Level` by :mod:`flyswat.fast.batch`), so a seat can be given any
level or a modified one (a faster hand, a sharper eye) without recompiling.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from flyswat.fast import policy, rng
from flyswat.fast.policy import CENTRE, CNT, OUT_CARDS, OUT_MS, ST, VALUES, decide

FLIES = 96
CARDS = 112

#: Per-game counters, one column each.
COUNTERS = (
    "turns",  # reveals (R10)
    "rounds",  # slap rounds opened, empty ones included (R12, R13)
    "swatter_rounds",  # opened by a swatter (R12)
    "fifth_colour_rounds",  # opened by a fifth colour (R13)
    "empty_rounds",  # the centre was empty: nothing to slap (R15)
    "slaps",  # hands laid and accepted
    "wins",  # flies won (R18)
    "wrong_hands",  # hands on a fly of a colour not allowed (R19)
    "penalties",  # penalties paid: a won fly went back to a draw pile (R19)
    "late_slaps",  # planned hands that missed the slap window (R21)
    "lapses",  # bot rounds with no hand at all by lapse
    "misjudged",  # bot rounds played on a misjudged colour
)
N_COUNTERS = len(COUNTERS)
#: Room for the slaps of one traced game (a game has at most 112 rounds of at most 8 hands).
MAX_TRACE = 112 * 8


@njit(cache=True)
def _play(
    wf: np.ndarray,
    wi: np.ndarray,
    seats: int,
    hands: int,
    remove: int,
    window: int,
    start: int,
    points: np.ndarray,
    flies: np.ndarray,
    wrong: np.ndarray,
    counters: np.ndarray,
    trace_deck: np.ndarray,
    trace_slaps: np.ndarray,
    trace: bool,
) -> int:
    """Play one game from a fresh shuffle; fill ``points``, ``flies``, ``wrong`` (each seat's
    hands on a wrong colour, R19) and ``counters``.

    ``wf`` and ``wi`` are the scratch arrays of :mod:`flyswat.fast.policy`, set up by
    :func:`play_batch`; the centre lives in ``wi``. With ``trace``, ``trace_deck`` gets the
    shuffled deck (top first) and ``trace_slaps`` one row ``(turn, seat, card, ms)`` per
    accepted slap, in arrival order. Returns the number of slaps, which is more than
    ``trace_slaps`` holds only in a game far longer than any seen (then the trace is cut).
    """
    deck = np.arange(CARDS)
    wi[ST] = rng.store(rng.shuffle(rng.load(wi[ST]), deck))  # R5
    if trace:
        trace_deck[:] = deck
    draw = np.empty((seats, 128), dtype=np.int64)  # circular buffers, top at head
    head = np.zeros(seats, dtype=np.int64)
    count = np.zeros(seats, dtype=np.int64)
    for k in range(CARDS - remove):  # R6, R7
        s = (start + k) % seats
        draw[s, count[s]] = deck[remove + k]
        count[s] += 1
    won = np.empty((seats, CARDS), dtype=np.int64)
    n_won = np.zeros(seats, dtype=np.int64)
    n_centre = 0
    wi[CNT : CNT + 6] = 0
    n_colours = 0
    first = np.full(CARDS, -1, dtype=np.int64)  # bottom hand's slap index, per card
    r_seat = np.empty(8 * 2, dtype=np.int64)
    r_card = np.empty(8 * 2, dtype=np.int64)
    r_ms = np.empty(8 * 2, dtype=np.int64)
    n_trace = 0
    seat = start
    turn = 0
    while True:
        card = draw[seat, head[seat]]  # R10
        head[seat] = (head[seat] + 1) & 127
        count[seat] -= 1
        ending = count[seat] == 0  # R22
        turn += 1
        colour = card // 16
        if card < FLIES and not (n_colours == 4 and wi[CNT + colour] == 0):
            wi[CENTRE + n_centre] = card  # R11, R13a
            n_centre += 1
            if wi[CNT + colour] == 0:
                n_colours += 1
            wi[CNT + colour] += 1
        else:
            counters[1] += 1
            counters[2 if card >= FLIES else 3] += 1
            if n_centre == 0:
                counters[4] += 1  # R15
            else:
                # Each seat plans its hands (R16); arrivals are merged by time, ties by seat.
                n = 0
                for s in range(seats):
                    k = decide(wf, wi, s, n_centre, hands, seats)
                    counters[10] += wi[policy.LAPSED]
                    counters[11] += wi[policy.MISJUDGED]
                    for h in range(k):
                        ms = wi[OUT_MS + h]
                        if ms >= window:  # R21: the window closes at slap_window_ms
                            counters[9] += 1
                            continue
                        j = n
                        while j > 0 and r_ms[j - 1] > ms:
                            r_seat[j] = r_seat[j - 1]
                            r_card[j] = r_card[j - 1]
                            r_ms[j] = r_ms[j - 1]
                            j -= 1
                        r_seat[j] = s
                        r_card[j] = wi[OUT_CARDS + h]
                        r_ms[j] = ms
                        n += 1
                counters[5] += n
                top = 0
                for c in range(6):
                    top = max(top, wi[CNT + c])
                for i in range(n):  # R17: the first hand on a card is the bottom one
                    if first[r_card[i]] < 0:
                        first[r_card[i]] = i
                    if trace and n_trace < trace_slaps.shape[0]:
                        trace_slaps[n_trace, 0] = turn - 1
                        trace_slaps[n_trace, 1] = r_seat[i]
                        trace_slaps[n_trace, 2] = r_card[i]
                        trace_slaps[n_trace, 3] = r_ms[i]
                    n_trace += 1
                for i in range(n):  # R18, R20: wins first, in arrival order
                    c = r_card[i]
                    if wi[CNT + c // 16] == top and first[c] == i:
                        won[r_seat[i], n_won[r_seat[i]]] = c
                        n_won[r_seat[i]] += 1
                        counters[6] += 1
                for i in range(n):  # R19, R20: then penalties, in arrival order
                    c = r_card[i]
                    first[c] = -1
                    if wi[CNT + c // 16] != top:
                        counters[7] += 1
                        s = r_seat[i]
                        wrong[s] += 1
                        if n_won[s] > 0:
                            n_won[s] -= 1
                            draw[s, (head[s] + count[s]) & 127] = won[s, n_won[s]]
                            count[s] += 1
                            counters[8] += 1
                # Take the won flies out of the centre (the colour counts held still till now).
                m = 0
                for k in range(n_centre):
                    c = wi[CENTRE + k]
                    taken = False
                    if wi[CNT + c // 16] == top:
                        for i in range(n):
                            if r_card[i] == c:
                                taken = True
                                break
                    if not taken:
                        wi[CENTRE + m] = c
                        m += 1
                n_centre = m
                n_colours = 0
                wi[CNT : CNT + 6] = 0
                for k in range(n_centre):
                    wi[CNT + wi[CENTRE + k] // 16] += 1
                for c in range(6):
                    if wi[CNT + c] > 0:
                        n_colours += 1
        if ending:
            break
        seat = (seat + 1) % seats
    counters[0] = turn
    for s in range(seats):
        total = 0
        for k in range(n_won[s]):
            total += VALUES[won[s, k] % 16]
        points[s] = total
        flies[s] = n_won[s]
    return n_trace


@njit(cache=True)
def play_batch(
    n_games: int,
    seats: int,
    hands: int,
    remove: int,
    window: int,
    starts: np.ndarray,
    params: np.ndarray,
    seed: int,
    points: np.ndarray,
    flies: np.ndarray,
    wrong: np.ndarray,
    counters: np.ndarray,
    trace_deck: np.ndarray,
    trace_slaps: np.ndarray,
    trace_n: np.ndarray,
    trace: bool,
) -> None:
    """Play ``n_games`` games, game ``g`` started by seat ``starts[g]``, seeded by ``seed``.

    ``params`` has a row per seat (:data:`~flyswat.fast.policy.PARAM_FIELDS`) and, last, the
    rival model of ``contest`` bots. Fills row ``g`` of ``points``, ``flies``, ``wrong`` (per
    seat) and ``counters`` (:data:`COUNTERS`). With ``trace``, also ``trace_deck[g]``,
    ``trace_slaps[g]`` and ``trace_n[g]`` (see :func:`_play`); otherwise those arrays may
    have a single row.
    """
    wf = np.zeros(policy.WF_SIZE, dtype=np.float64)
    wi = np.zeros(policy.WI_SIZE, dtype=np.int64)
    policy.setup(wf, params, hands)
    wi[ST] = seed
    for g in range(n_games):
        t = g if trace else 0
        trace_n[t] = _play(
            wf, wi, seats, hands, remove, window, starts[g], points[g], flies[g], wrong[g],
            counters[g], trace_deck[t], trace_slaps[t], trace,
        )  # fmt: skip
