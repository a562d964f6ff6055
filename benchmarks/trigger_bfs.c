/* A reference breadth-first search of the trigger model, in C: the floor the explorer is
 * measured against (issue 58: "a C BFS of the same model"). benchmarks/compare/check.py builds
 * it with `cc -O2` into a temporary directory when a C compiler exists and checks that it
 * counts exactly the explorer's distinct states.
 *
 * Same model, same state encoding as models/trigger.py under locking `none`: a state is
 * (live, peak, writers, pending, count_read, dirty, busy, fired) with `writers` the multiset of
 * writer classes as one integer, digit c in base W + 1 the number of writers of class c; the
 * classes are (used in this slot: 0/1, turns left: 0..T, or -1 when T = 0) numbered as
 * models.trigger_state.Classes numbers them. Symmetry is structural, so each successor is its
 * own representative, as in the Python model. `busy` is always 0 without append-sync, so it is
 * not stored. What the search keeps is what the explorer keeps: every distinct state in BFS
 * order (the queue), its BFS parent, and the maxima of live and peak turns.
 *
 * Usage: trigger_bfs WRITERS GAP MAX_TURNS TURNS
 * prints one line: distinct states, transitions, depth, worst live turns, peak RSS in KiB (0: unknown)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    uint64_t writers;
    int32_t live, peak, pending, count;
    uint8_t dirty, fired;
} State;

static State *states;
static int32_t *parent;
static size_t n_states, cap_states;
static int64_t *table; /* open addressing: state id + 1, 0 empty */
static size_t table_mask;

static int classes, base_, turns_k;
static uint64_t unit[64];
static int may_append[64], appended[64], ticked[64];
static int64_t moved[64];

static uint64_t hash_state(const State *s) {
    uint64_t h = s->writers * 0x9E3779B97F4A7C15ull;
    h ^= ((uint64_t)(uint32_t)s->live << 1) ^ ((uint64_t)(uint32_t)s->peak << 9) ^
         ((uint64_t)(uint32_t)(s->pending + 1) << 17) ^ ((uint64_t)(uint32_t)s->count << 25) ^
         ((uint64_t)s->dirty << 33) ^ ((uint64_t)s->fired << 34);
    h ^= h >> 29;
    h *= 0xBF58476D1CE4E5B9ull;
    h ^= h >> 32;
    return h;
}

static int same(const State *a, const State *b) {
    return a->writers == b->writers && a->live == b->live && a->peak == b->peak &&
           a->pending == b->pending && a->count == b->count && a->dirty == b->dirty &&
           a->fired == b->fired;
}

static void *grow(void *p, size_t bytes) {
    void *q = realloc(p, bytes);
    if (!q) {
        fprintf(stderr, "trigger_bfs: out of memory\n");
        exit(2);
    }
    return q;
}

static void rehash(void) {
    size_t size = (table_mask + 1) * 2;
    int64_t *fresh = calloc(size, sizeof *fresh);
    if (!fresh) {
        fprintf(stderr, "trigger_bfs: out of memory\n");
        exit(2);
    }
    for (size_t i = 0; i < n_states; i++) {
        size_t j = hash_state(&states[i]) & (size - 1);
        while (fresh[j]) j = (j + 1) & (size - 1);
        fresh[j] = (int64_t)i + 1;
    }
    free(table);
    table = fresh;
    table_mask = size - 1;
}

/* Adds s (reached from state `from`) unless already visited. */
static void visit(const State *s, int32_t from) {
    size_t j = hash_state(s) & table_mask;
    while (table[j]) {
        if (same(&states[table[j] - 1], s)) return;
        j = (j + 1) & table_mask;
    }
    if (n_states == cap_states) {
        cap_states *= 2;
        states = grow(states, cap_states * sizeof *states);
        parent = grow(parent, cap_states * sizeof *parent);
    }
    states[n_states] = *s;
    parent[n_states] = from;
    table[j] = (int64_t)++n_states;
    if (2 * n_states > table_mask) rehash();
}

/* This process's peak resident set (Linux VmHWM; 0 elsewhere). Not getrusage's ru_maxrss,
 * which keeps the peak of the process before exec: the Python parent's, when it forks us. */
static long peak_rss_kib(void) {
    char line[256];
    long kib = 0;
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "VmHWM: %ld", &kib) == 1) break;
    fclose(f);
    return kib;
}

static int class_index(int used, int left) { return used * turns_k + (left < 0 ? 0 : left); }

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: trigger_bfs WRITERS GAP MAX_TURNS TURNS\n");
        return 2;
    }
    int w = atoi(argv[1]), g = atoi(argv[2]), m = atoi(argv[3]), t = atoi(argv[4]);
    turns_k = t > 0 ? t + 1 : 1;
    classes = 2 * turns_k;
    base_ = w + 1;
    if (w < 1 || g < 0 || m < 1 || t < 0 || classes > 60) {
        fprintf(stderr, "trigger_bfs: writers >= 1, gap >= 0, max_turns >= 1, 0 <= turns <= 29\n");
        return 2;
    }
    double span = 1;
    for (int c = 0; c < classes; c++) span *= base_;
    if (span >= 9223372036854775807.0) {
        fprintf(stderr, "trigger_bfs: (writers + 1)^classes does not fit 63 bits\n");
        return 2;
    }
    for (int c = 0; c < classes; c++) {
        int used = c / turns_k, left = t > 0 ? c % turns_k : -1;
        unit[c] = c ? unit[c - 1] * (uint64_t)base_ : 1;
        may_append[c] = used == 0 && left != 0;
        appended[c] = class_index(1, left > 0 ? left - 1 : left);
        ticked[c] = class_index(0, left);
    }
    for (int c = 0; c < classes; c++) moved[c] = (int64_t)unit[appended[c]] - (int64_t)unit[c];

    cap_states = 1024;
    states = grow(NULL, cap_states * sizeof *states);
    parent = grow(NULL, cap_states * sizeof *parent);
    table_mask = 2047;
    table = calloc(table_mask + 1, sizeof *table);
    State init = {unit[class_index(0, t > 0 ? t : -1)] * (uint64_t)w, 0, 0, -1, 0, 0, 0};
    visit(&init, -1);

    uint64_t transitions = 0;
    int worst_live = 0;
    int depth = 0;
    size_t level_end = n_states;
    int counts[64];
    for (size_t head = 0; head < n_states; head++) {
        if (head == level_end) {
            depth++;
            level_end = n_states;
        }
        State s = states[head];
        if (s.live > worst_live) worst_live = s.live;
        if (s.pending == 0) { /* the compactor acts at the slot boundary, before anything else */
            State after = s;
            after.live -= s.count - m;
            after.pending = -1;
            after.count = 0;
            after.dirty = 0;
            transitions++;
            visit(&after, (int32_t)head);
            continue;
        }
        uint64_t rest = s.writers, tick_writers = 0;
        for (int c = 0; c < classes; c++) {
            counts[c] = (int)(rest % (uint64_t)base_);
            rest /= (uint64_t)base_;
            tick_writers += (uint64_t)counts[c] * unit[ticked[c]];
        }
        State a = s; /* what any append does to the fields but the writers' */
        a.live = s.live + 1;
        if (s.pending > 0) {
            a.dirty = 1;
        } else if (a.live > m) {
            a.fired = 1;
            if (g == 0) {
                a.live = m;
            } else {
                a.pending = g;
                a.count = a.live;
                a.dirty = 0;
            }
        }
        if (a.live > a.peak) a.peak = a.live;
        for (int c = 0; c < classes; c++) {
            if (counts[c] && may_append[c]) {
                State after = a;
                after.writers = (uint64_t)((int64_t)s.writers + moved[c]);
                transitions++;
                visit(&after, (int32_t)head);
            }
        }
        State after = s;
        after.writers = tick_writers;
        if (s.pending > 0) after.pending = s.pending - 1;
        transitions++;
        visit(&after, (int32_t)head);
    }
    printf("%zu %llu %d %d %ld\n", n_states, (unsigned long long)transitions, depth, worst_live,
           peak_rss_kib());
    return 0;
}
