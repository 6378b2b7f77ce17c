"""The compiled game: R5–R24 over one flat integer array per game (numba).

This is the second implementation of the rules that must exist (the first is
:mod:`flyswat.engine`); it is held to the engine by the golden transcripts of
``tests/golden/`` (:func:`replay` plays each one's fixed deal and slaps) and by replaying
traced bot games into records that :func:`flyswat.record.verify_record` accepts. The bot
simulator (:func:`play_batch`) and the vectorised environment (:mod:`flyswat.sim.fast.vector`)
both play through the functions here: :func:`reveal`, :func:`lay` and :func:`resolve`.

A game's whole state is one ``int64`` row ``wi``: the policy's part first
(:mod:`flyswat.sim.fast.policy`: the random generator, the centre and its colour counts), then
the offsets below. Cards are the indices of :data:`flyswat.cards.DECK`: flies 0–95 (colour
``i // 16``, value :data:`~flyswat.sim.fast.policy.VALUES` ``[i % 16]``), swatters 96–111.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from flyswat.sim.fast import policy, rng
from flyswat.sim.fast.policy import CENTRE, CNT, OUT_CARDS, OUT_MS, ST, VALUES, WI_SIZE, decide

FLIES = 96
CARDS = 112

#: How the game loop is compiled (see :func:`_play_games`); ``_nrt`` is not in numba's stubs.
_GAME_LOOP: dict[str, Any] = {"_nrt": False, "error_model": "numpy", "fastmath": {"contract"}}

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

#: The game's part of ``wi``. A draw pile is a circular buffer of 128 with its top at HEAD.
DRAW = WI_SIZE  # wi[DRAW + 128*s + k]
HEAD = DRAW + 8 * 128
COUNT = HEAD + 8
WON = COUNT + 8  # wi[WON + 112*s + k], the top of the won pile last
N_WON = WON + 8 * CARDS
FIRST = N_WON + 8  # per card: the index of its bottom hand in the open round, or -1
R_SEAT = FIRST + CARDS  # the open round's hands in stacking order: seat, card, ms
R_CARD = R_SEAT + 16
R_MS = R_CARD + 16
N_R = R_MS + 16  # how many hands
N_CENTRE = N_R + 1
TO_MOVE = N_CENTRE + 1
TURN = TO_MOVE + 1  # reveals so far
ENDING = TURN + 1  # 1 after a seat revealed its last card (R22)
OVER = ENDING + 1
BOX = OVER + 1  # cards in the box: removed ones and played triggers
TRIGGER = BOX + 1  # the open round's trigger, or -1
N_TRACE = TRIGGER + 1
ROW = N_TRACE + 1


@njit(cache=True)
def new_game(wi: np.ndarray, seats: int, start: int, removed: int) -> None:
    """Reset everything but the draw piles (set them first) for a game started by ``start``."""
    for s in range(seats):
        wi[N_WON + s] = 0
    for c in range(CARDS):
        wi[FIRST + c] = -1
    for c in range(6):
        wi[CNT + c] = 0
    wi[N_R] = 0
    wi[N_CENTRE] = 0
    wi[TO_MOVE] = start
    wi[TURN] = 0
    wi[ENDING] = 0
    wi[OVER] = 0
    wi[BOX] = removed
    wi[TRIGGER] = -1
    wi[N_TRACE] = 0


@njit(cache=True)
def deal(wi: np.ndarray, seats: int, deck: np.ndarray, remove: int, start: int) -> None:
    """Deal ``deck`` (top first) as R6–R7 say and start the game."""
    for s in range(seats):
        wi[HEAD + s] = 0
        wi[COUNT + s] = 0
    s = start
    for k in range(CARDS - remove):  # seat (start + k) % seats gets card k
        wi[DRAW + 128 * s + wi[COUNT + s]] = deck[remove + k]
        wi[COUNT + s] += 1
        s = s + 1 if s + 1 < seats else 0
    new_game(wi, seats, start, remove)


@njit(cache=True)
def set_pile(wi: np.ndarray, s: int, cards: np.ndarray, n: int) -> None:
    """Seat ``s``'s draw pile as the first ``n`` of ``cards``, top first."""
    wi[HEAD + s] = 0
    wi[COUNT + s] = n
    for k in range(n):
        wi[DRAW + 128 * s + k] = cards[k]


@njit(cache=True, inline="always")
def reveal(wi: np.ndarray, seats: int, counters: np.ndarray) -> int:
    """The seat to move reveals (R10): 0 when the fly went to the centre (R11, R13a), 1 when
    a slap round with something to slap is open (R12, R13), 2 when the round had an empty
    centre and closed at once (R15). Sets ``wi[OVER]`` when the game ends (R22)."""
    seat = wi[TO_MOVE]
    card = wi[DRAW + 128 * seat + wi[HEAD + seat]]
    wi[HEAD + seat] = (wi[HEAD + seat] + 1) & 127
    wi[COUNT + seat] -= 1
    if wi[COUNT + seat] == 0:
        wi[ENDING] = 1
    wi[TURN] += 1
    wi[TO_MOVE] = seat + 1 if seat + 1 < seats else 0  # clockwise; not %, a division
    colour = card // 16
    if card < FLIES:
        colours = 0
        for c in range(6):
            if wi[CNT + c] > 0:
                colours += 1
        if not (colours == 4 and wi[CNT + colour] == 0):
            wi[CENTRE + wi[N_CENTRE]] = card
            wi[N_CENTRE] += 1
            wi[CNT + colour] += 1
            wi[OVER] = wi[ENDING]
            return 0
    counters[1] += 1
    counters[2 if card >= FLIES else 3] += 1
    if wi[N_CENTRE] == 0:
        counters[4] += 1
        wi[BOX] += 1
        wi[OVER] = wi[ENDING]
        return 2
    wi[TRIGGER] = card
    wi[N_R] = 0
    return 1


@njit(cache=True, inline="always")
def lay(wi: np.ndarray, seat: int, card: int, ms: int, window: int, counters: np.ndarray) -> None:
    """Lay a hand in the open round: kept in time order, ties in the order laid (lay seats
    in seat order for ties by seat), or dropped when ``ms`` is not within ``window`` (R21)."""
    if ms >= window:  # Rules.in_window: a hand counts when ms < slap_window_ms
        counters[9] += 1
        return
    j = wi[N_R]
    while j > 0 and wi[R_MS + j - 1] > ms:
        wi[R_SEAT + j] = wi[R_SEAT + j - 1]
        wi[R_CARD + j] = wi[R_CARD + j - 1]
        wi[R_MS + j] = wi[R_MS + j - 1]
        j -= 1
    wi[R_SEAT + j] = seat
    wi[R_CARD + j] = card
    wi[R_MS + j] = ms
    wi[N_R] += 1


@njit(cache=True, inline="always")
def resolve(
    wi: np.ndarray,
    counters: np.ndarray,
    wrong: np.ndarray,
    trace_slaps: np.ndarray,
    trace: bool,
) -> None:
    """Close the open round: wins (R18), then penalties (R19), in stacking order (R20); the
    trigger to the box. ``wrong`` counts each seat's hands on a wrong colour; with ``trace``
    the hands are written to ``trace_slaps`` as rows ``(turn, seat, card, ms)``."""
    n = wi[N_R]
    counters[5] += n
    top = 0
    for c in range(6):
        top = max(top, wi[CNT + c])
    allowed = 0  # R14, a bit per colour, fixed before any fly leaves the centre
    for c in range(6):
        allowed |= (wi[CNT + c] == top) << c
    for i in range(n):  # R17: the first hand on a card is the bottom one
        c = wi[R_CARD + i]
        wi[FIRST + c] = i if wi[FIRST + c] < 0 else wi[FIRST + c]
    if trace:
        for i in range(min(n, trace_slaps.shape[0] - wi[N_TRACE])):
            k = wi[N_TRACE] + i
            trace_slaps[k, 0] = wi[TURN] - 1
            trace_slaps[k, 1] = wi[R_SEAT + i]
            trace_slaps[k, 2] = wi[R_CARD + i]
            trace_slaps[k, 3] = wi[R_MS + i]
    wi[N_TRACE] += n
    for i in range(n):  # R18, R20: wins first, in stacking order
        c = wi[R_CARD + i]
        s = wi[R_SEAT + i]
        # Without a branch (which hand wins is unpredictable): the card is written above the
        # won pile's top either way, and the pile grows over it only if it won.
        won = (allowed >> (c // 16)) & 1 and wi[FIRST + c] == i
        wi[WON + CARDS * s + wi[N_WON + s]] = c
        wi[N_WON + s] += won
        wi[CNT + c // 16] -= won
        counters[6] += won
    m = 0  # the won flies leave the centre, the others keep their order
    for k in range(wi[N_CENTRE]):
        c = wi[CENTRE + k]
        wi[CENTRE + m] = c
        m += not (wi[FIRST + c] >= 0 and (allowed >> (c // 16)) & 1)
    wi[N_CENTRE] = m
    for i in range(n):  # R19, R20: then penalties, in stacking order
        c = wi[R_CARD + i]
        wi[FIRST + c] = -1
        if not (allowed >> (c // 16)) & 1:
            counters[7] += 1
            s = wi[R_SEAT + i]
            wrong[s] += 1
            if wi[N_WON + s] > 0:
                wi[N_WON + s] -= 1
                tail = (wi[HEAD + s] + wi[COUNT + s]) & 127
                wi[DRAW + 128 * s + tail] = wi[WON + CARDS * s + wi[N_WON + s]]
                wi[COUNT + s] += 1
                counters[8] += 1
    wi[N_R] = 0
    wi[TRIGGER] = -1
    wi[BOX] += 1
    wi[OVER] = wi[ENDING]


@njit(cache=True, inline="always")
def bot_hands(
    wf: np.ndarray, wi: np.ndarray, s: int, seats: int, hands: int, window: int, c: np.ndarray
) -> None:
    """Seat ``s``'s bot decides (:func:`flyswat.sim.fast.policy.decide`) and lays its hands;
    the round must have been judged (:func:`flyswat.sim.fast.policy.judge_round`)."""
    k = decide(wf, wi, s, hands, seats)
    c[10] += wi[policy.LAPSED]
    c[11] += wi[policy.MISJUDGED]
    for h in range(k):
        lay(wi, s, wi[OUT_CARDS + h], wi[OUT_MS + h], window, c)


@njit(cache=True, inline="always")
def points(wi: np.ndarray, s: int) -> int:
    """Seat ``s``'s points so far (R23)."""
    total = 0
    for k in range(wi[N_WON + s]):
        total += VALUES[wi[WON + CARDS * s + k] % 16]
    return total


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
    points_out: np.ndarray,
    flies: np.ndarray,
    wrong: np.ndarray,
    counters: np.ndarray,
    trace_deck: np.ndarray,
    trace_slaps: np.ndarray,
    trace_n: np.ndarray,
    trace: bool,
) -> None:
    """Play ``n_games`` bot games, game ``g`` started by seat ``starts[g]``, seeded by ``seed``.

    ``params`` has a row per seat (:data:`~flyswat.sim.fast.policy.PARAM_FIELDS`). Fills row
    ``g`` of ``points_out``, ``flies``, ``wrong`` (per seat) and ``counters``
    (:data:`COUNTERS`). With ``trace``, also ``trace_deck[g]`` (the shuffled deck, top
    first), ``trace_slaps[g]`` (rows ``(turn, seat, card, ms)`` in stacking order) and
    ``trace_n[g]`` (how many; more than the trace holds only in a game far longer than any
    seen); otherwise those arrays may have a single row.
    """
    wf = np.zeros(policy.WF_SIZE, dtype=np.float64)
    wi = np.zeros(ROW, dtype=np.int64)
    policy.setup(wf, params)
    wi[ST] = seed
    deck = np.arange(CARDS)
    _play_games(
        wf, wi, deck, n_games, seats, hands, remove, window, starts,
        points_out, flies, wrong, counters, trace_deck, trace_slaps, trace_n, trace,
    )  # fmt: skip


@njit(cache=True, **_GAME_LOOP)  # type: ignore[untyped-decorator]  # _nrt: not in the stubs
def _play_games(
    wf: np.ndarray,
    wi: np.ndarray,
    deck: np.ndarray,
    n_games: int,
    seats: int,
    hands: int,
    remove: int,
    window: int,
    starts: np.ndarray,
    points_out: np.ndarray,
    flies: np.ndarray,
    wrong: np.ndarray,
    counters: np.ndarray,
    trace_deck: np.ndarray,
    trace_slaps: np.ndarray,
    trace_n: np.ndarray,
    trace: bool,
) -> None:
    """The game loop of :func:`play_batch`, over scratch arrays it made and set up.

    Compiled without numba's reference counting (it allocates nothing): with it, every
    array passed to an inlined function or sliced costs two atomic updates, which took a
    third of the time (measured with ``perf``). With numpy's error model: no check for zero
    before each division (none can be zero here). With multiplies and adds fused (FMA, one
    rounding where there were two), which shortens the chain of each ``exp``: +7 % games a
    second, and the same games bit for bit over the 155,000 of seven tables checked.
    """
    for g in range(n_games):
        t = g if trace else 0
        for k in range(CARDS):
            deck[k] = k
        wi[ST] = rng.store(rng.shuffle(rng.load(wi[ST]), deck))  # R5
        if trace:
            for k in range(CARDS):
                trace_deck[t, k] = deck[k]
        deal(wi, seats, deck, remove, starts[g])
        c = counters[g]  # views taken once a game: each costs atomic reference counting
        wrong_g = wrong[g]
        slaps_t = trace_slaps[t]
        while wi[OVER] == 0:
            if reveal(wi, seats, c) == 1:
                policy.judge_round(wi, wi[N_CENTRE])
                for s in range(seats):
                    bot_hands(wf, wi, s, seats, hands, window, c)
                resolve(wi, c, wrong_g, slaps_t, trace)
        c[0] = wi[TURN]
        for s in range(seats):
            points_out[g, s] = points(wi, s)
            flies[g, s] = wi[N_WON + s]
        trace_n[t] = wi[N_TRACE]


@njit(cache=True)
def replay(
    seats: int,
    piles: np.ndarray,
    sizes: np.ndarray,
    start: int,
    removed: int,
    slaps: np.ndarray,
    centre: np.ndarray,
    n_centre: np.ndarray,
    draw: np.ndarray,
    won: np.ndarray,
    box: np.ndarray,
) -> int:
    """Replay a fixed deal and fixed slaps: seat ``s``'s draw pile is ``piles[s, :sizes[s]]``
    (top first); ``slaps`` has rows ``(turn, seat, card)`` in stacking order. After each turn
    ``i``: ``centre[i, :n_centre[i]]``, ``draw[i]`` and ``won[i]`` (counts per seat), ``box[i]``.
    Returns the number of turns played (R22 ends the game)."""
    wi = np.zeros(ROW, dtype=np.int64)
    for s in range(seats):
        set_pile(wi, s, piles[s], sizes[s])
    new_game(wi, seats, start, removed)
    counters = np.zeros(N_COUNTERS, dtype=np.int64)
    wrong = np.zeros(seats, dtype=np.int64)
    cut = np.zeros((1, 4), dtype=np.int16)
    j = 0
    i = 0
    while wi[OVER] == 0:
        if reveal(wi, seats, counters) == 1:
            while j < slaps.shape[0] and slaps[j, 0] == i:
                lay(wi, slaps[j, 1], slaps[j, 2], j, 1 << 30, counters)  # times keep the order
                j += 1
            resolve(wi, counters, wrong, cut, False)
        n_centre[i] = wi[N_CENTRE]
        for k in range(wi[N_CENTRE]):
            centre[i, k] = wi[CENTRE + k]
        for s in range(seats):
            draw[i, s] = wi[COUNT + s]
            won[i, s] = wi[N_WON + s]
        box[i] = wi[BOX]
        i += 1
    return i
