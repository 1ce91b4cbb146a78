/* simkit._native: the checker's whole-stream passes, and the journal of a commit's rows, in C (docs/performance.md,
"the native core, stage 1").

Each pass walks typed columns of ground truth (array.array, bytearray: anything with the buffer protocol and an
integer format) from row k, does what the usual row needs, and returns where it stopped: at the end, or at the
first row it leaves to Python (a row whose judgment needs an event id, a value kept aside, a page). The Python
reference of every pass, and the rule for each row, are in simkit/truth/passes.py; tests/truth/test_passes.py
holds the two equal on generated columns, and every verdict equal with and without this module. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

/* The interface simkit calls (its ABI, checked in simkit/truth/passes.py): raise it with any change of a
function's arguments, its answer or Journal's table, in both. A module built from other sources (a stale
build beside newer code) is not used: the reference runs. */
#define ABI 5

typedef struct {
    Py_buffer view;
    char format;        /* the struct format character: b B h H i I l L q Q */
    Py_ssize_t n;
} Col;

enum { READ = 0, WRITE = 1, WIDE = 2 };      /* WRITE: written to, WIDE: read as int64_t (the ``at`` columns) */

static int col_open(PyObject *obj, Col *c, int how, const char *name) {
    if (PyObject_GetBuffer(obj, &c->view, PyBUF_FORMAT | PyBUF_ND | (how & WRITE ? PyBUF_WRITABLE : 0)) < 0)
        return -1;
    const char *f = c->view.format ? c->view.format : "B";
    while (*f == '@' || *f == '=' || *f == '<') f++;
    c->format = f[0];
    if (!f[0] || f[1] || !strchr("bBhHiIlLqQ", f[0]) || c->view.ndim != 1) {
        PyBuffer_Release(&c->view);
        PyErr_Format(PyExc_TypeError, "%s: a one-dimensional column of integers expected", name);
        return -1;
    }
    if ((how & (WRITE | WIDE)) && (c->view.itemsize != 8 || c->format == 'Q' || c->format == 'L')) {
        /* signed: -1 (no outcome) and -2 - seq read back as written (passes.py: array("q")) */
        PyBuffer_Release(&c->view);
        PyErr_Format(PyExc_TypeError, "%s: a column of signed 64-bit integers expected", name);
        return -1;
    }
    c->n = c->view.len / c->view.itemsize;
    return 0;
}

static inline int64_t col_get(const Col *c, Py_ssize_t i) {
    const char *p = (const char *)c->view.buf;
    switch (c->format) {
    case 'b': return ((const int8_t *)p)[i];
    case 'B': return ((const uint8_t *)p)[i];
    case 'h': return ((const int16_t *)p)[i];
    case 'H': return ((const uint16_t *)p)[i];
    case 'i': return ((const int32_t *)p)[i];
    case 'I': return ((const uint32_t *)p)[i];
    case 'l': case 'L':
        return c->view.itemsize == 8 ? ((const int64_t *)p)[i] : ((const int32_t *)p)[i];
    default: return ((const int64_t *)p)[i];
    }
}

static inline int64_t *col_q(const Col *c) { return (int64_t *)c->view.buf; }

static void col_close(Col *cols, int n) {
    for (int i = 0; i < n; i++)
        if (cols[i].view.obj) PyBuffer_Release(&cols[i].view);
}

/* Open n columns, each read as hows[j] and called names[j] in an error; on an error, none stays open. */
static int cols_open(PyObject **objs, Col *c, int n, const int *hows, const char **names) {
    memset(c, 0, n * sizeof *c);
    for (int j = 0; j < n; j++)
        if (col_open(objs[j], &c[j], hows[j], names[j])) { col_close(c, n); return -1; }
    return 0;
}

/* An integer argument compared with a column's rows: *held 0 if it is past int64_t, where no row can equal it
(the reference compares Python ints: an OverflowError here would be an answer it does not give). */
static int as_compared(PyObject *o, long long *x, int *held) {
    int overflow;
    *x = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (*x == -1 && PyErr_Occurred()) return -1;
    *held = !overflow;
    return 0;
}

/* the first index in positions[lo:hi] whose value is above x (bisect.bisect_right) */
static Py_ssize_t bisect_right(const Col *positions, int64_t x, Py_ssize_t lo, Py_ssize_t hi) {
    while (lo < hi) {
        Py_ssize_t mid = lo + (hi - lo) / 2;
        if (x < col_get(positions, mid)) hi = mid; else lo = mid + 1;
    }
    return lo;
}

static Py_ssize_t bisect_left(const Col *positions, int64_t x) {
    Py_ssize_t lo = 0, hi = positions->n;
    while (lo < hi) {
        Py_ssize_t mid = lo + (hi - lo) / 2;
        if (col_get(positions, mid) < x) lo = mid + 1; else hi = mid;
    }
    return lo;
}

/* ranks(out, codes, positions, first, step): out[k] = the rank of position codes[k] in positions, or -1 */
static PyObject *ranks(PyObject *self, PyObject *args) {
    PyObject *o_out, *o_codes, *o_positions, *o_first, *o_step;
    long long first, step;
    int first_held, step_held;
    Col c[3];
    memset(c, 0, sizeof c);
    if (!PyArg_ParseTuple(args, "OOOOO", &o_out, &o_codes, &o_positions, &o_first, &o_step)
        || as_compared(o_first, &first, &first_held) || as_compared(o_step, &step, &step_held))
        return NULL;
    if (!first_held || !step_held) step = 0;   /* a grid past int64_t: by bisection, the same ranks */
    if (col_open(o_out, &c[0], WRITE, "out") || col_open(o_codes, &c[1], READ, "codes")
        || col_open(o_positions, &c[2], READ, "positions")) {
        col_close(c, 3);
        return NULL;
    }
    Py_ssize_t n = c[2].n, m = c[0].n < c[1].n ? c[0].n : c[1].n;
    int64_t *out = col_q(&c[0]);
    for (Py_ssize_t k = 0; k < m; k++) {
        int64_t code = col_get(&c[1], k), r;
        if (!n) { out[k] = -1; continue; }
        if (step > 0) {
            if (code < first) { out[k] = -1; continue; }
            uint64_t q = ((uint64_t)code - (uint64_t)first) / (uint64_t)step;
            r = q > (uint64_t)(n - 1) ? n - 1 : (int64_t)q;
        } else {
            r = bisect_left(&c[2], code);
            if (r > n - 1) r = n - 1;
        }
        out[k] = col_get(&c[2], r) == code ? r : -1;
    }
    col_close(c, 3);
    Py_RETURN_NONE;
}

/* receipts(at, seqs, codes, kinds, ranks, k, void) -> (k, waiting) */
static PyObject *receipts(PyObject *self, PyObject *args) {
    PyObject *o[5];
    Py_ssize_t k;
    int is_void;
    Col c[5];
    if (!PyArg_ParseTuple(args, "OOOOOnp", &o[0], &o[1], &o[2], &o[3], &o[4], &k, &is_void)) return NULL;
    static const int hows[] = {WRITE, READ, READ, READ, READ};
    static const char *names[] = {"at", "seqs", "codes", "kinds", "ranks"};
    if (cols_open(o, c, 5, hows, names)) return NULL;
    int64_t *at = col_q(&c[0]);
    if (k < 0) k = 0;                                   /* as the reference: no row before the first */
    Py_ssize_t n = c[1].n, waiting = 0;
    if (c[2].n < n) n = c[2].n;
    if (c[4].n < n) n = c[4].n;
    for (; k < n; k++) {
        int64_t code = col_get(&c[2], k);
        if (code < 0 || code >= c[3].n) break;
        int64_t kind = col_get(&c[3], code);
        if (!kind) continue;
        int64_t i = col_get(&c[4], k);
        if (i < 0 || i >= c[0].n || at[i] != -1 || (is_void && kind != 2)) break;
        int64_t seq = col_get(&c[1], k);
        if (kind == 2 && seq == INT64_MAX) break;       /* -2 - seq is past int64_t: the reference raises */
        if (kind == 2) { at[i] = -2 - seq; waiting++; } else at[i] = seq;
    }
    col_close(c, 5);
    return Py_BuildValue("nn", k, waiting);
}

/* effects(at, seqs, ranks, k, stop_unranked) -> (k, found) */
static PyObject *effects(PyObject *self, PyObject *args) {
    PyObject *o[3];
    Py_ssize_t k;
    int stop_unranked;
    Col c[3];
    if (!PyArg_ParseTuple(args, "OOOnp", &o[0], &o[1], &o[2], &k, &stop_unranked)) return NULL;
    static const int hows[] = {WRITE, READ, READ};
    static const char *names[] = {"at", "seqs", "ranks"};
    if (cols_open(o, c, 3, hows, names)) return NULL;
    int64_t *at = col_q(&c[0]);
    if (k < 0) k = 0;
    Py_ssize_t n = c[1].n < c[2].n ? c[1].n : c[2].n, found = 0;
    for (; k < n; k++) {
        int64_t i = col_get(&c[2], k);
        if (i < 0) {
            if (stop_unranked) break;
            continue;
        }
        if (i >= c[0].n) break;
        if (at[i] < -1) {
            int64_t receipt = -2 - at[i], seq = col_get(&c[1], k);
            at[i] = receipt > seq ? receipt : seq;
            found++;
        }
    }
    col_close(c, 3);
    return Py_BuildValue("nn", k, found);
}

/* claims(workers, mark, codes, kinds, ranks, decided, k) -> k; codes None: the rows are effects */
static PyObject *claims(PyObject *self, PyObject *args) {
    PyObject *o_workers, *o_mark, *o_codes, *o_kinds, *o_ranks, *o_decided;
    long long mark;
    int has_mark;
    Py_ssize_t k;
    Col c[5];
    memset(c, 0, sizeof c);
    if (!PyArg_ParseTuple(args, "OOOOOOn", &o_workers, &o_mark, &o_codes, &o_kinds, &o_ranks, &o_decided, &k)
        || as_compared(o_mark, &mark, &has_mark))
        return NULL;
    int receipts = o_codes != Py_None;
    if (col_open(o_workers, &c[0], READ, "workers") || col_open(o_ranks, &c[3], READ, "ranks")
        || col_open(o_decided, &c[4], READ, "decided")
        || (receipts && (col_open(o_codes, &c[1], READ, "codes") || col_open(o_kinds, &c[2], READ, "kinds")))) {
        col_close(c, 5);
        return NULL;
    }
    Py_ssize_t n = c[0].n < c[3].n ? c[0].n : c[3].n;
    if (receipts && c[1].n < n) n = c[1].n;
    if (k < 0) k = 0;
    for (; k < n; k++) {
        int64_t worker = col_get(&c[0], k);
        if (has_mark && worker == mark) break;
        if (!worker) continue;
        int64_t kind = 2;
        if (receipts) {
            int64_t code = col_get(&c[1], k);
            if (code < 0 || code >= c[2].n) break;
            kind = col_get(&c[2], code);
            if (!kind) continue;
        }
        int64_t rank = col_get(&c[3], k);
        if (kind != 2 || rank < 0 || rank >= c[4].n || col_get(&c[4], rank)) break;
    }
    col_close(c, 5);
    return PyLong_FromSsize_t(k);
}

/* commits(seqs, kinds, commit, cursors, applied, versions, mark, positions, at, i, last, hi)
   -> (i, regressions, last, hi); last None: no write raised applied_position yet */
static PyObject *commits(PyObject *self, PyObject *args) {
    PyObject *o[8], *o_last, *o_mark;
    long long commit, mark, last = 0;
    int has_mark, last_held = 0;      /* last_held 0: no last, or one past int64_t, which no row holds */
    Py_ssize_t i, hi;
    Col c[7];
    if (!PyArg_ParseTuple(args, "OOLOOOOOOnOn", &o[0], &o[1], &commit, &o[2], &o[3], &o[4], &o_mark, &o[5], &o[6],
                          &i, &o_last, &hi)
        || as_compared(o_mark, &mark, &has_mark) || (o_last != Py_None && as_compared(o_last, &last, &last_held)))
        return NULL;
    static const int hows[] = {READ, READ, READ, READ, READ, READ, WIDE};
    static const char *names[] = {"seqs", "kinds", "cursors", "applied", "versions", "positions", "at"};
    if (cols_open(o, c, 7, hows, names)) return NULL;
    Py_ssize_t n = c[0].n, regressions = 0, end = c[5].n;
    for (int j = 1; j < 5; j++) if (c[j].n < n) n = c[j].n;
    const int64_t *at = col_q(&c[6]);
    if (i < 1) i = 1;
    if (hi < 0 || hi > end) hi = hi < 0 ? 0 : end;     /* as the reference: the checker's is within */
    for (; i < n; i++) {
        if (col_get(&c[1], i) != commit || col_get(&c[2], i) != col_get(&c[2], i - 1)) break;
        int64_t bv = col_get(&c[4], i - 1), av = col_get(&c[4], i);
        if (has_mark && (bv == mark || av == mark)) break;
        int64_t ba = col_get(&c[3], i - 1), aa = col_get(&c[3], i), seq = col_get(&c[0], i);
        if (aa > ba) {
            Py_ssize_t lo, h;
            if (last_held && last == ba) {
                lo = h = hi;
                while (h < end && col_get(&c[5], h) <= aa) h++;
            } else {
                lo = bisect_right(&c[5], ba, 0, end);
                h = bisect_right(&c[5], aa, lo, end);
            }
            int undone = 0;
            for (Py_ssize_t j = lo; j < h; j++)
                if (j >= c[6].n || at[j] == -1 || at[j] > seq) { undone = 1; break; }
            if (undone) break;
            last = aa, last_held = 1, hi = h;
        }
        regressions += av < bv || aa < ba;
    }
    col_close(c, 7);
    if (last_held) return Py_BuildValue("nnLn", i, regressions, last, hi);
    return Py_BuildValue("nnOn", i, regressions, o_last, hi);     /* None, or the one past int64_t given */
}


/* ---- Journal: one committed event's rows in four logs, in one call (simkit/truth/journal.py) ----

Journal(logs, prefix) -> a callable taking journal.ROW's 13 arguments. ``logs``: per log, (condition, columns):
condition -1 (always), or (argument, 0: is not None / 1: is true); each column (column, kind, argument or constant):
kind 0 a plain array, 1 Ints, 2 Codes, 3 Ids (the row's id, stored as its position where it is the default id).
``prefix``: what model.default_id puts before a position's digits. The rows written are the generated Python writer's, value for value; a value a column refuses undoes the row in
every log, and its exception propagates. */

enum { PLAIN = 0, INTS = 1, CODES = 2, IDS = 3 };
typedef union { int64_t i; double d; } Item;
enum { NARGS = 13, EVENT_ID = 4, POSITION = 5 };

typedef struct {
    int kind, arg;              /* arg -1: the constant ``value`` */
    PyObject *column, *value;
    PyObject *append;           /* PLAIN: the array's append; INTS: its values' append; IDS: its codes' append */
    PyObject *fallback;         /* INTS: the column's own append; CODES, IDS: its code() */
    PyObject *table;            /* CODES: the column's value -> code dictionary */
    long long mark, top;
    PyObject *target;           /* PLAIN, INTS, IDS: the array a row's value goes to (CODES: read when written) */
    char fmt;                   /* PLAIN: 'd' (floats), 'i' (integers from lo to hi), 0 (never buffered) */
    long long lo, hi;
    Item *pending;              /* rows buffered (journal_begin), not yet in ``target`` */
    Py_ssize_t npending, cap;
} Slot;

typedef struct {
    int when, test;             /* when -1: always */
    Py_ssize_t n;
    Slot *slots;
} LogSpec;

typedef struct {
    PyObject_HEAD
    int nlogs, has_ids;
    LogSpec logs[4];
    PyObject *prefix;           /* what default_id puts before the position's digits */
    int buffering;              /* journal_begin .. journal_end: rows whose values need no Python are buffered */
} Journal;

static PyObject *s_append, *s_code, *s_codes, *s_values, *s_mark, *s_top, *s_table_attr;
static PyTypeObject JournalType;

static void journal_dealloc(Journal *self) {
    for (int l = 0; l < self->nlogs; l++) {
        for (Py_ssize_t k = 0; k < self->logs[l].n; k++) {
            Slot *s = &self->logs[l].slots[k];
            Py_XDECREF(s->column); Py_XDECREF(s->value); Py_XDECREF(s->append);
            Py_XDECREF(s->fallback); Py_XDECREF(s->table); Py_XDECREF(s->target);
            PyMem_Free(s->pending);
        }
        PyMem_Free(self->logs[l].slots);
    }
    Py_XDECREF(self->prefix);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* Is o a tuple? Else a TypeError naming what it is (PyArg_ParseTuple of anything else is a SystemError). */
static int a_tuple(PyObject *o, const char *what) {
    if (PyTuple_Check(o)) return 1;
    PyErr_Format(PyExc_TypeError, "Journal: %s: a tuple expected, not %.100s", what, Py_TYPE(o)->tp_name);
    return 0;
}

/* A PLAIN column's ``fmt`` (and range): from its buffer's format, if it has one; 0. */
static int plain_format(Slot *s) {
    Py_buffer view;
    if (PyObject_GetBuffer(s->column, &view, PyBUF_FORMAT | PyBUF_ND) < 0) { PyErr_Clear(); return 0; }
    const char *f = view.format ? view.format : "B";
    if (view.ndim == 1 && f[0] == 'd' && !f[1]) s->fmt = 'd';
    else if (view.ndim == 1 && f[0] && !f[1] && strchr("bhilq", f[0]) && view.itemsize <= 8) {
        s->fmt = 'i';
        s->hi = (long long)(((uint64_t)1 << (8 * view.itemsize - 1)) - 1);
        s->lo = -s->hi - 1;
    }
    PyBuffer_Release(&view);
    return 0;
}

static int slot_init(Slot *s, PyObject *spec) {
    PyObject *column, *which;
    if (!a_tuple(spec, "a column") || !PyArg_ParseTuple(spec, "OiO", &column, &s->kind, &which)) return -1;
    s->column = Py_NewRef(column);
    if (PyLong_Check(which)) {
        s->arg = (int)PyLong_AsLong(which);
        if (s->arg < 0 || s->arg >= NARGS) { PyErr_SetString(PyExc_ValueError, "argument out of range"); return -1; }
    } else {
        s->arg = -1;
        s->value = Py_NewRef(which);
    }
    PyObject *holder = NULL;
    switch (s->kind) {
    case PLAIN:
        s->append = PyObject_GetAttr(column, s_append);
        s->target = Py_NewRef(column);
        return s->append ? plain_format(s) : -1;
    case INTS:
        holder = PyObject_GetAttr(column, s_values);
        if (!holder) return -1;
        s->append = PyObject_GetAttr(holder, s_append);
        s->target = holder;
        if (!s->append) return -1;
        s->fallback = PyObject_GetAttr(column, s_append);
        if (!s->fallback) return -1;
        PyObject *mark = PyObject_GetAttr(column, s_mark), *top = mark ? PyObject_GetAttr(column, s_top) : NULL;
        if (top) { s->mark = PyLong_AsLongLong(mark); s->top = PyLong_AsLongLong(top); }
        Py_XDECREF(mark); Py_XDECREF(top);
        return s->append && s->fallback && top && !PyErr_Occurred() ? 0 : -1;
    case CODES:
        s->fallback = PyObject_GetAttr(column, s_code);
        s->table = PyObject_GetAttr(column, s_table_attr);
        return s->fallback && s->table && PyDict_CheckExact(s->table) ? 0 : -1;
    case IDS:
        holder = PyObject_GetAttr(column, s_codes);
        if (!holder) return -1;
        s->append = PyObject_GetAttr(holder, s_append);     /* an Ids column keeps its codes array for life */
        s->target = holder;
        s->fallback = PyObject_GetAttr(column, s_code);
        return s->append && s->fallback ? 0 : -1;
    }
    PyErr_SetString(PyExc_ValueError, "unknown column kind");
    return -1;
}

static PyObject *journal_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    PyObject *logs, *prefix;
    if (!PyArg_ParseTuple(args, "O!U", &PyTuple_Type, &logs, &prefix)) return NULL;
    if (PyTuple_GET_SIZE(logs) > 4) { PyErr_SetString(PyExc_ValueError, "at most four logs"); return NULL; }
    Journal *self = (Journal *)type->tp_alloc(type, 0);
    if (!self) return NULL;
    self->prefix = Py_NewRef(prefix);
    for (Py_ssize_t l = 0; l < PyTuple_GET_SIZE(logs); l++) {
        PyObject *when, *columns;
        LogSpec *log = &self->logs[l];
        if (!a_tuple(PyTuple_GET_ITEM(logs, l), "a log")
            || !PyArg_ParseTuple(PyTuple_GET_ITEM(logs, l), "OO!", &when, &PyTuple_Type, &columns)) goto fail;
        log->when = -1;
        if (when != Py_None && (!a_tuple(when, "a log's condition")
                                || !PyArg_ParseTuple(when, "ii", &log->when, &log->test))) goto fail;
        if (when != Py_None && (log->when < 0 || log->when >= NARGS)) {    /* a row's argument, read by index */
            PyErr_SetString(PyExc_ValueError, "argument out of range");
            goto fail;
        }
        log->slots = PyMem_Calloc(PyTuple_GET_SIZE(columns) ? PyTuple_GET_SIZE(columns) : 1, sizeof(Slot));
        if (!log->slots) { PyErr_NoMemory(); goto fail; }
        self->nlogs = (int)l + 1;
        for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(columns); k++) {
            log->n = k + 1;
            if (slot_init(&log->slots[k], PyTuple_GET_ITEM(columns, k))) goto fail;
            self->has_ids |= log->slots[k].kind == IDS;
        }
    }
    return (PyObject *)self;
fail:
    Py_DECREF(self);
    return NULL;
}

static int call_one(PyObject *f, PyObject *v) {
    PyObject *r = PyObject_CallOneArg(f, v);
    Py_XDECREF(r);
    return r ? 0 : -1;
}

static int slot_add(Slot *s, PyObject *v, PyObject *position, int is_default) {
    switch (s->kind) {
    case PLAIN:
        return call_one(s->append, v);
    case INTS: {
        if (PyLong_CheckExact(v)) {
            int overflow;
            long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
            if (!overflow && s->mark < x && x <= s->top) return call_one(s->append, v);
        }
        return call_one(s->fallback, v);
    }
    case CODES: {
        PyObject *key = PyUnicode_CheckExact(v) ? Py_NewRef(v) : PyTuple_Pack(2, (PyObject *)Py_TYPE(v), v);
        if (!key) return -1;
        PyObject *code = PyDict_GetItemWithError(s->table, key);       /* borrowed */
        Py_DECREF(key);
        if (code) Py_INCREF(code);
        else if (PyErr_Occurred() || !(code = PyObject_CallOneArg(s->fallback, v))) return -1;
        PyObject *codes = PyObject_GetAttr(s->column, s_codes);         /* after code(): it may have widened */
        PyObject *r = codes ? PyObject_CallMethodOneArg(codes, s_append, code) : NULL;
        Py_XDECREF(codes);
        Py_DECREF(code);
        Py_XDECREF(r);
        return r ? 0 : -1;
    }
    case IDS: {
        if (is_default) return call_one(s->append, position);
        PyObject *code = PyObject_CallOneArg(s->fallback, v);
        if (!code) return -1;
        int failed = call_one(s->append, code);
        Py_DECREF(code);
        return failed;
    }
    }
    return -1;
}

/* Is the exact str ``s`` ``prefix`` followed by the decimal digits of p >= 0 (default_id's form)? 1 or 0. */
int is_prefixed_digits(PyObject *s, const char *prefix, Py_ssize_t plen, long long p) {
    char digits[24];
    int n = 0;
    unsigned long long v = (unsigned long long)p;
    do { digits[sizeof digits - 1 - n++] = (char)('0' + v % 10); v /= 10; } while (v);
    if (p < 0 || !PyUnicode_IS_READY(s) || !PyUnicode_IS_ASCII(s) || PyUnicode_GET_LENGTH(s) != plen + n) return 0;
    const char *text = (const char *)PyUnicode_1BYTE_DATA(s);
    return memcmp(text, prefix, plen) == 0 && memcmp(text + plen, digits + sizeof digits - n, n) == 0;
}

/* Is event_id the default id of position (a non-negative int below 2**63)? -1: an error. */
static int is_default_id(Journal *self, PyObject *event_id, PyObject *position) {
    if (!PyLong_CheckExact(position)) return 0;
    int overflow;
    long long p = PyLong_AsLongLongAndOverflow(position, &overflow);
    if (overflow || p < 0) return 0;
    Py_ssize_t plen;
    const char *prefix = PyUnicode_AsUTF8AndSize(self->prefix, &plen);
    if (!prefix) return -1;
    if (PyUnicode_CheckExact(event_id)) return is_prefixed_digits(event_id, prefix, plen, p);
    PyObject *id = PyUnicode_FromFormat("%U%lld", self->prefix, p);     /* (a str subclass: its own ==) */
    if (!id) return -1;
    int equal = PyObject_RichCompareBool(event_id, id, Py_EQ);
    Py_DECREF(id);
    return equal;
}

/* -- buffered rows (simkit/_native_world.c's quick path): between journal_begin and journal_end, a row every
   value of which its column keeps as it is (no code to make, nothing kept aside) is buffered, and each column's
   rows are written with one ``frombytes`` (journal_flush); any other row first flushes those before it. Only
   the quick path calls the journal then, and nothing reads a log before it returns. */

/* 1: ``v`` goes to ``s`` as ``*item`` with no Python; 0: it needs the slot's own path (no error left) */
static int slot_item(Slot *s, PyObject *v, PyObject *position, int is_default, Item *item) {
    int overflow;
    switch (s->kind) {
    case PLAIN:
        if (s->fmt == 'd' && PyFloat_CheckExact(v)) { item->d = PyFloat_AS_DOUBLE(v); return 1; }
        if (s->fmt != 'i' || !PyLong_CheckExact(v)) return 0;
        item->i = PyLong_AsLongLongAndOverflow(v, &overflow);
        return !overflow && s->lo <= item->i && item->i <= s->hi && !PyErr_Occurred();
    case INTS:
        if (!PyLong_CheckExact(v)) return 0;
        item->i = PyLong_AsLongLongAndOverflow(v, &overflow);
        return !overflow && s->mark < item->i && item->i <= s->top;
    case CODES: {
        if (!PyUnicode_CheckExact(v)) return 0;
        PyObject *code = PyDict_GetItemWithError(s->table, v);         /* borrowed */
        if (!code || !PyLong_CheckExact(code)) { PyErr_Clear(); return 0; }
        item->i = PyLong_AsLongLong(code);
        return !PyErr_Occurred() || (PyErr_Clear(), 0);
    }
    case IDS:
        if (!is_default) return 0;
        item->i = PyLong_AsLongLong(position);
        return !PyErr_Occurred() || (PyErr_Clear(), 0);
    }
    return 0;
}

/* Buffer the row if every value allows: 1; 0: it needs the unbuffered path; -1: an error (nothing kept). */
static int buffer_row(Journal *self, PyObject **a, int is_default) {
    enum { MOST = 64 };
    Item items[MOST];
    Slot *to[MOST];
    int n = 0;
    for (int l = 0; l < self->nlogs; l++) {
        LogSpec *log = &self->logs[l];
        if (log->when >= 0) {
            PyObject *v = a[log->when];
            int on = log->test ? (v == Py_True ? 1 : v == Py_False ? 0 : -1) : v != Py_None;
            if (on < 0) return 0;
            if (!on) continue;
        }
        for (Py_ssize_t k = 0; k < log->n; k++) {
            Slot *s = &log->slots[k];
            if (n == MOST || !slot_item(s, s->arg >= 0 ? a[s->arg] : s->value, a[POSITION], is_default, &items[n]))
                return 0;
            to[n++] = s;
        }
    }
    for (int j = 0; j < n; j++) {
        Slot *s = to[j];
        if (s->npending == s->cap) {
            Py_ssize_t cap = s->cap ? 2 * s->cap : 256;
            Item *more = PyMem_Realloc(s->pending, cap * sizeof(Item));
            if (!more) {
                for (int u = 0; u < j; u++) to[u]->npending--;
                PyErr_NoMemory();
                return -1;
            }
            s->pending = more;
            s->cap = cap;
        }
        s->pending[s->npending++] = items[j];
    }
    return 1;
}

/* Write a slot's buffered rows to its array, converted to the array's items: 0, or -1 with an error. */
static int slot_flush(Slot *s) {
    PyObject *target = s->target ? Py_NewRef(s->target) : PyObject_GetAttr(s->column, s_codes);
    if (!target) return -1;
    Py_buffer view;
    if (PyObject_GetBuffer(target, &view, PyBUF_FORMAT | PyBUF_ND) < 0) { Py_DECREF(target); return -1; }
    char f = view.format ? view.format[0] : 'B';
    Py_ssize_t size = view.itemsize;
    PyBuffer_Release(&view);
    PyObject *bytes = PyBytes_FromStringAndSize(NULL, s->npending * size);
    if (!bytes) { Py_DECREF(target); return -1; }
    char *out = PyBytes_AS_STRING(bytes);
    for (Py_ssize_t k = 0; k < s->npending; k++, out += size) {
        Item it = s->pending[k];
        if (f == 'd') { memcpy(out, &it.d, sizeof it.d); continue; }
        int8_t b = (int8_t)it.i; int16_t h = (int16_t)it.i; int32_t w = (int32_t)it.i;
        memcpy(out, size == 1 ? (void *)&b : size == 2 ? (void *)&h : size == 4 ? (void *)&w : (void *)&it.i, size);
    }
    PyObject *r = PyObject_CallMethod(target, "frombytes", "O", bytes);
    Py_DECREF(bytes); Py_DECREF(target);
    s->npending = 0;
    Py_XDECREF(r);
    return r ? 0 : -1;
}

/* Write every buffered row: 0, or -1 with an error (the logs then lose the rows not yet written). */
static int journal_flush(Journal *self) {
    int failed = 0;
    for (int l = 0; l < self->nlogs; l++)
        for (Py_ssize_t k = 0; k < self->logs[l].n; k++) {
            Slot *s = &self->logs[l].slots[k];
            if (s->npending && slot_flush(s) < 0 && !failed) failed = -1;
            s->npending = 0;
        }
    return failed;
}

/* journal_begin(obj): buffer the rows of a Journal from now on (1), or 0 if obj is none */
int journal_begin(PyObject *obj) {
    if (!Py_IS_TYPE(obj, &JournalType)) return 0;
    ((Journal *)obj)->buffering = 1;
    return 1;
}

/* journal_end(obj): write what is buffered, and buffer no more: 0, or -1 with an error */
int journal_end(PyObject *obj) {
    ((Journal *)obj)->buffering = 0;
    return journal_flush((Journal *)obj);
}

static PyObject *journal_call(Journal *self, PyObject *args, PyObject *kwds) {
    if (PyTuple_GET_SIZE(args) != NARGS || (kwds && PyDict_GET_SIZE(kwds))) {
        PyErr_Format(PyExc_TypeError, "a journal row takes %d positional arguments", NARGS);
        return NULL;
    }
    PyObject **a = &PyTuple_GET_ITEM(args, 0);
    Py_ssize_t before[4];
    int is_default = self->has_ids ? is_default_id(self, a[EVENT_ID], a[POSITION]) : 0;
    if (is_default < 0) return NULL;
    if (self->buffering) {
        int buffered = buffer_row(self, a, is_default);
        if (buffered) return buffered < 0 ? NULL : Py_NewRef(Py_None);
        if (journal_flush(self) < 0) return NULL;
    }
    for (int l = 0; l < self->nlogs; l++)
        if ((before[l] = self->logs[l].n ? PyObject_Size(self->logs[l].slots[0].column) : 0) < 0) return NULL;
    for (int l = 0; l < self->nlogs; l++) {
        LogSpec *log = &self->logs[l];
        if (log->when >= 0) {
            PyObject *v = a[log->when];
            int on = log->test ? PyObject_IsTrue(v) : v != Py_None;
            if (on < 0) goto undo;
            if (!on) continue;
        }
        for (Py_ssize_t k = 0; k < log->n; k++) {
            Slot *s = &log->slots[k];
            if (slot_add(s, s->arg >= 0 ? a[s->arg] : s->value, a[POSITION], is_default)) goto undo;
        }
    }
    Py_RETURN_NONE;
undo: {
        PyObject *type, *value, *tb;
        PyErr_Fetch(&type, &value, &tb);
        for (int l = 0; l < self->nlogs; l++)
            for (Py_ssize_t k = 0; k < self->logs[l].n; k++)
                if (PySequence_DelSlice(self->logs[l].slots[k].column, before[l], PY_SSIZE_T_MAX) < 0)
                    PyErr_Clear();
        PyErr_Restore(type, value, tb);
        return NULL;
    }
}

static PyObject *journal_begin_method(PyObject *self, PyObject *unused) {
    journal_begin(self);
    Py_RETURN_NONE;
}

static PyObject *journal_end_method(PyObject *self, PyObject *unused) {
    return journal_end(self) < 0 ? NULL : Py_NewRef(Py_None);
}

static PyMethodDef journal_methods[] = {
    {"begin", journal_begin_method, METH_NOARGS, "begin(): buffer the rows that need no Python, until end()."},
    {"end", journal_end_method, METH_NOARGS, "end(): write the buffered rows, and buffer no more."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject JournalType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "simkit._native.Journal",
    .tp_basicsize = sizeof(Journal),
    .tp_dealloc = (destructor)journal_dealloc,
    .tp_call = (ternaryfunc)journal_call,
    .tp_methods = journal_methods,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Journal(logs, prefix): one committed event's rows in four logs, in one call.",
    .tp_new = journal_new,
};

static PyMethodDef methods[] = {
    {"ranks", ranks, METH_VARARGS, "ranks(out, codes, positions, first, step): each position's rank, or -1."},
    {"receipts", receipts, METH_VARARGS, "receipts(at, seqs, codes, kinds, ranks, k, void) -> (k, waiting)."},
    {"effects", effects, METH_VARARGS, "effects(at, seqs, ranks, k, stop_unranked) -> (k, found)."},
    {"claims", claims, METH_VARARGS, "claims(workers, mark, codes, kinds, ranks, decided, k) -> k."},
    {"commits", commits, METH_VARARGS,
     "commits(seqs, kinds, commit, cursors, applied, versions, mark, positions, at, i, last, hi)"
     " -> (i, regressions, last, hi)."},
    {NULL, NULL, 0, NULL},
};

extern PyMethodDef world_methods[];          /* simkit/_native_world.c: the world's quick request path */

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "simkit._native",
    "The checker's whole-stream passes, the journal of a commit's rows and the world's quick request path in C;\n"
    "their references are simkit.truth.passes, simkit.truth.journal and simkit.world.simulation.", -1, methods,
};

PyMODINIT_FUNC PyInit__native(void) {
    if (!(s_append = PyUnicode_InternFromString("append")) || !(s_code = PyUnicode_InternFromString("code"))
        || !(s_codes = PyUnicode_InternFromString("codes")) || !(s_values = PyUnicode_InternFromString("values"))
        || !(s_mark = PyUnicode_InternFromString("mark")) || !(s_top = PyUnicode_InternFromString("_top"))
        || !(s_table_attr = PyUnicode_InternFromString("_code")) || PyType_Ready(&JournalType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m && (PyModule_AddObjectRef(m, "Journal", (PyObject *)&JournalType) < 0
              || PyModule_AddFunctions(m, world_methods) < 0 || PyModule_AddIntConstant(m, "ABI", ABI) < 0))
        Py_CLEAR(m);
    return m;
}
