/* simkit._native, stage 2: the world's quick request path in C (docs/performance.md, "the native core, stage 2").

quick(world, gen, result, left, worker) drives one worker's consumer generator as World._worker does: it sends
``result``, counts the request against the progress guard's ``left``, and executes at once the usual requests:
a page's ``Lookup`` (Driver.lookup: MemoryStore.lookup), a ``Handle`` of an ``ok`` event where every event is
``ok`` (World.handle: ``apply``), and a ``Commit`` that World._commit_at_once would journal (World._journaled: a
default id with no terminal receipt, on the memory store, no fault able to strike, one worker), the journal's
rows buffered while it runs (simkit/_native.c, journal_begin). It returns (op, left, failed) at the first request
it leaves to Python: one of any other kind or case, one whose well-formedness test does not answer True, or the
one that brings ``left`` to 0 (all unexecuted: ``failed`` is None); or one whose execution raised ``failed``
after it began (its state as the Python's would be), or whose well-formedness test raised it (a signal's). It
makes the same state changes and rows, in the same order, as the Python it stands for, which stays the
reference (``SIMKIT_NATIVE=0``): tests/world/test_quick.py holds the two equal. Anything it cannot read as
expected, it hands over before changing a thing; a value-keeping step it does not do itself (a new code, a
slot outside the array), it asks of the Python method that does it.

What it reads of simkit's own slotted records (requests, events, checkpoints) and parts (IdMap, Codes, Clock)
it reads by offset while each type is as it was at world_setup; it builds a checkpoint or an event as the
record's own __init__ does; and it tests a request's well-formedness rules (simkit.ops, as data) where each is
a test it knows, answering only "well-formed" and leaving every other answer to the Python test (``well``).

events_of builds a page's events from the event table's columns (EventTable.events; EventTable.event is its
reference). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <stdint.h>

/* set once by world_setup(): the request types, their well-formedness tests, and the model's constants */
static PyObject *zero, *one;
static PyObject *Handle_t, *Commit_t, *Lookup_t, *well_handle, *well_commit, *well_lookup, *terminal, *Checkpoint_t,
    *IdMap_t, *s_apply;

static PyObject *n_sink, *n_store, *n_clock, *n_faults, *n_timing, *n_journal, *n_solo, *n_late, *n_latency,
    *n_limit, *n_quiet, *n_external, *n_all_ok, *n_event, *n_behavior, *n_id, *n_position, *n_outcome,
    *n_applied, *n_with_effect, *n_receipts, *n_other, *n_outcomes, *n_base, *n_slots, *n_codes, *n_table,
    *n_code_map, *n_aside, *n_size, *n_effect_count, *n_env, *n_now_attr, *n_ahead, *n_seq, *n_checkpoint,
    *n_cursor, *n_version, *n_named_at, *n_placed, *n_place, *n_set_at, *n_count, *n_terminal_at, *s_ok,
    *s_quarantined, *s_quarantine, *s_commit, *n_events, *n_get, *n_id_at, *n_dunder_init, *n_dunder_slots;

static int intern_all(void) {
#define N(var, text) if (!(var = PyUnicode_InternFromString(text))) return -1;
    N(n_sink, "sink") N(n_store, "store") N(n_clock, "clock") N(n_faults, "faults") N(n_timing, "timing")
    N(n_journal, "_journal") N(n_solo, "_solo") N(n_late, "_late") N(n_latency, "commit_latency")
    N(n_limit, "time_limit") N(n_quiet, "quiet") N(n_external, "external") N(n_all_ok, "_all_ok")
    N(n_event, "event") N(n_behavior, "behavior") N(n_id, "id") N(n_position, "position") N(n_outcome, "outcome")
    N(n_applied, "applied_position") N(n_with_effect, "with_effect") N(n_receipts, "receipts")
    N(n_other, "other") N(n_outcomes, "outcomes") N(n_base, "base") N(n_slots, "slots") N(n_codes, "codes")
    N(n_table, "table") N(n_code_map, "_code") N(n_aside, "aside") N(n_size, "_size")
    N(n_effect_count, "effect_count") N(n_env, "env") N(n_now_attr, "_now") N(n_ahead, "ahead") N(n_seq, "seq")
    N(n_checkpoint, "_checkpoint") N(n_cursor, "resume_cursor") N(n_version, "checkpoint_version")
    N(n_named_at, "_named_at") N(n_placed, "_placed") N(n_place, "_place") N(n_set_at, "set_at")
    N(n_count, "count") N(n_terminal_at, "_terminal_at") N(s_apply, "apply") N(s_ok, "ok")
    N(s_quarantined, "quarantined") N(s_quarantine, "quarantine") N(s_commit, "commit") N(n_events, "events")
    N(n_get, "get") N(n_id_at, "id_at") N(n_dunder_init, "__init__") N(n_dunder_slots, "__slots__")
#undef N
    if (!(zero = PyLong_FromLong(0)) || !(one = PyLong_FromLong(1))) return -1;
    return 0;
}

/* -- records read by offset --------------------------------------------------------------------------------
   A field of simkit's own slotted records (requests, events, checkpoints) and parts (an IdMap, its Codes, the
   clock), read where the object's type is exactly the record's and the type is as it was at world_setup (its version tag, which
   any change of the class clears): the very member descriptor getattr would call, without the lookup. */
#define MAX_LAYOUTS 8
#define MAX_FIELDS 6
typedef struct {
    PyTypeObject *type;
    unsigned int tag;
    int n, record;                                  /* record: built by setting its slots in order */
    PyObject *name[MAX_FIELDS];                     /* interned: compared by identity */
    Py_ssize_t offset[MAX_FIELDS];
} Layout;
static Layout layouts[MAX_LAYOUTS];
static int n_layouts;

/* the layout of type ``t`` while the type is as it was at world_setup, else NULL */
static const Layout *layout_of(PyTypeObject *t) {
    for (int k = 0; k < n_layouts; k++)
        if (layouts[k].type == t) return t->tp_version_tag == layouts[k].tag ? &layouts[k] : NULL;
    return NULL;
}

/* op's field ``name`` by offset (a borrowed reference), or NULL where it cannot be read so (no error set) */
static PyObject *slot(PyObject *o, PyObject *name) {
    const Layout *L = layout_of(Py_TYPE(o));
    for (int f = 0; L && f < L->n; f++)
        if (L->name[f] == name) return *(PyObject **)((char *)o + L->offset[f]);
    return NULL;
}

/* getattr(o, name): by offset where it can, else Python's own lookup (a new reference, or NULL with an error) */
static PyObject *GET(PyObject *o, PyObject *name) {
    PyObject *v = slot(o, name);
    return v ? Py_NewRef(v) : PyObject_GetAttr(o, name);
}

/* setattr(o, name, v): by offset where it can (o's type a slotted one, not a record: those are immutable),
   else Python's own. 0, or -1 with an error. */
static int SET(PyObject *o, PyObject *name, PyObject *v) {
    const Layout *L = layout_of(Py_TYPE(o));
    for (int f = 0; L && !L->record && f < L->n; f++)
        if (L->name[f] == name) {
            Py_XSETREF(*(PyObject **)((char *)o + L->offset[f]), Py_NewRef(v));
            return 0;
        }
    return PyObject_SetAttr(o, name, v);
}

/* record(*fields) for a record type (simkit.model.record: its __init__ sets each slot in order): built as that
   __init__ builds it where the type is as it was at world_setup, else by calling the type. A new reference. */
static PyObject *make(PyObject *type, PyObject *const *fields, int n) {
    PyTypeObject *t = (PyTypeObject *)type;
    const Layout *L = layout_of(t);      /* (compares pointers: a non-type matches none) */
    if (!L || !L->record || L->n != n) return PyObject_Vectorcall(type, fields, n, NULL);
    PyObject *o = t->tp_alloc(t, 0);
    for (int f = 0; o && f < n; f++) *(PyObject **)((char *)o + L->offset[f]) = Py_NewRef(fields[f]);
    return o;
}

/* a member descriptor of type ``t``'s own, of an object slot inside its instances, readable and writable
   without an audit; its PyMemberDef, else NULL */
static PyMemberDef *own_member(PyTypeObject *t, PyObject *d) {
    if (!d || !Py_IS_TYPE(d, &PyMemberDescr_Type) || PyDescr_TYPE(d) != t) return NULL;
    PyMemberDef *m = ((PyMemberDescrObject *)d)->d_member;
    if (m->type != T_OBJECT_EX || (m->flags & (READ_RESTRICTED | READONLY)) || m->offset < (Py_ssize_t)sizeof(PyObject)
        || m->offset > t->tp_basicsize - (Py_ssize_t)sizeof(PyObject *))
        return NULL;
    return m;
}

/* type ``t``'s fields: for a record, ``spec`` is (type, its record __init__, the member descriptors that __init__
   sets in order: simkit.model._RECORDS) and the type is read and built so only while its dict still holds that
   __init__ and those descriptors; for another slotted type (spec the type), its own __slots__. 0 (a type it
   cannot read stays unread), -1 */
static int layout_add(PyObject *spec, int record) {
    PyObject *init = NULL, *descrs = NULL;
    if (record) {
        if (!PyTuple_CheckExact(spec) || PyTuple_GET_SIZE(spec) != 3 || !PyTuple_CheckExact(PyTuple_GET_ITEM(spec, 2))) {
            PyErr_SetString(PyExc_TypeError, "records: a tuple of (type, __init__, descriptors)");
            return -1;
        }
        init = PyTuple_GET_ITEM(spec, 1); descrs = PyTuple_GET_ITEM(spec, 2); spec = PyTuple_GET_ITEM(spec, 0);
    }
    if (!PyType_Check(spec)) { PyErr_SetString(PyExc_TypeError, "records: types expected"); return -1; }
    PyTypeObject *t = (PyTypeObject *)spec;
    if (n_layouts == MAX_LAYOUTS || (record && !Py_IS_TYPE(t, &PyType_Type)) || t->tp_itemsize
        || t->tp_getattro != PyObject_GenericGetAttr || (!record && t->tp_setattro != PyObject_GenericSetAttr))
        return 0;
    Layout L = {.type = t};
    PyObject *seq = NULL;
    if (record) {
        PyObject *now = PyDict_GetItemWithError(t->tp_dict, n_dunder_init);
        L.record = now == init && t->tp_new == PyBaseObject_Type.tp_new && t->tp_alloc == PyType_GenericAlloc;
        seq = Py_NewRef(descrs);
    } else {
        PyObject *names = PyDict_GetItemWithError(t->tp_dict, n_dunder_slots);  /* its own, not a base's */
        seq = names ? PySequence_Fast(names, "__slots__") : NULL;        /* (a tuple or list: no code runs) */
        if (!seq || !(PyTuple_CheckExact(names) || PyList_CheckExact(names))) { Py_XDECREF(seq); PyErr_Clear(); return 0; }
    }
    int ok = PySequence_Fast_GET_SIZE(seq) <= MAX_FIELDS;
    for (Py_ssize_t k = 0; ok && k < PySequence_Fast_GET_SIZE(seq); k++) {
        PyObject *item = PySequence_Fast_GET_ITEM(seq, k), *name, *d;
        if (record) {                               /* the descriptor the __init__ sets: still the type's? */
            PyMemberDef *m = own_member(t, item);
            name = m ? PyUnicode_InternFromString(m->name) : NULL;
            d = name ? PyDict_GetItemWithError(t->tp_dict, name) : NULL;
            ok = d == item;
        } else {
            name = PyUnicode_CheckExact(item) ? Py_NewRef(item) : NULL;
            if (name) PyUnicode_InternInPlace(&name);
            d = name ? PyDict_GetItemWithError(t->tp_dict, name) : NULL;
            const char *text = own_member(t, d) ? PyUnicode_AsUTF8(name) : NULL;
            ok = text && strcmp(((PyMemberDescrObject *)d)->d_member->name, text) == 0;    /* its own slot */
        }
        Py_ssize_t offset = ok ? ((PyMemberDescrObject *)d)->d_member->offset : 0;
        for (int g = 0; ok && g < L.n; g++) ok = L.offset[g] != offset;
        if (!ok) { Py_XDECREF(name); break; }
        L.name[L.n] = name;                         /* (released by the next world_setup) */
        L.offset[L.n++] = offset;
        PyObject *found = PyObject_GetAttr((PyObject *)t, name);   /* (gives the type its version tag) */
        Py_XDECREF(found);
        ok = found != NULL;
    }
    Py_DECREF(seq);
    PyErr_Clear();
    L.tag = t->tp_version_tag;
    if (ok && L.tag) layouts[n_layouts++] = L;
    else for (int f = 0; f < L.n; f++) Py_DECREF(L.name[f]);
    return 0;
}

/* -- well-formedness: a request's rules (simkit.ops), tested in C where each is a test it knows ---------------
   Each rule is (path, test, argument): the field at ``path`` (names, read by offset only) passes ``test``.
   The C answers only "keeps every rule" (1); anything else (0) is the Python test's to answer, so the C never
   refuses a request, and reads nothing the Python test would not. */
enum { IS_STR = 1, IS_INT, IS_FIELD, IS_BOOL, IS_TYPE, IS_IN, IS_STR_IN };
#define MAX_RULES 12
typedef struct {
    int depth, test;
    PyObject *name[2], *arg;                        /* (names interned; released by the next world_setup) */
    long long max;                                  /* IS_FIELD: the field's largest value */
} Rule;
typedef struct { int n; Rule rule[MAX_RULES]; } Rules;     /* n -1: every request the Python test's */
static Rules rules_handle = {-1}, rules_commit = {-1};

static int keeps(const Rules *R, PyObject *op) {
    for (int k = 0; k < R->n; k++) {
        const Rule *r = &R->rule[k];
        PyObject *v = op;
        for (int f = 0; v && f < r->depth; f++) v = slot(v, r->name[f]);
        if (!v) return 0;
        int ok, overflow;
        long long x;
        switch (r->test) {
        case IS_STR: ok = PyUnicode_CheckExact(v); break;
        case IS_INT: ok = PyLong_CheckExact(v); break;
        case IS_FIELD:
            ok = PyLong_CheckExact(v) && (x = PyLong_AsLongLongAndOverflow(v, &overflow), !overflow)
                 && 0 <= x && x <= r->max;
            break;
        case IS_BOOL: ok = PyBool_Check(v); break;
        case IS_TYPE: ok = (PyObject *)Py_TYPE(v) == r->arg; break;
        case IS_IN: ok = (PyUnicode_CheckExact(v) || PyLong_CheckExact(v)) && PySequence_Contains(r->arg, v) == 1; break;
        case IS_STR_IN: ok = PyUnicode_CheckExact(v) && PySequence_Contains(r->arg, v) == 1; break;
        default: ok = 0;
        }
        if (!ok) { PyErr_Clear(); return 0; }
    }
    return R->n >= 0;
}

/* R's references released; R->n -1 */
static void rules_clear(Rules *R) {
    for (int k = 0; k < R->n; k++) {
        for (int f = 0; f < 2; f++) Py_CLEAR(R->rule[k].name[f]);
        Py_CLEAR(R->rule[k].arg);
    }
    R->n = -1;
}

/* rules as world_setup takes them (None, or a tuple of (names, test, argument)) into R; R->n -1 where a rule
   is not one the C knows. 0, or -1 (a TypeError: not of that shape). */
static int rules_set(Rules *R, PyObject *rules) {
    rules_clear(R);
    if (rules == Py_None) return 0;
    Rules out = {0};                                /* (out.n counts each rule begun: rules_clear) */
    if (!PyTuple_CheckExact(rules) || PyTuple_GET_SIZE(rules) > MAX_RULES) goto bad;
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(rules); k++) {
        PyObject *r = PyTuple_GET_ITEM(rules, k), *path;
        Rule *each = &out.rule[out.n++];
        if (!PyTuple_CheckExact(r) || PyTuple_GET_SIZE(r) != 3 || !PyTuple_CheckExact(path = PyTuple_GET_ITEM(r, 0))
            || PyTuple_GET_SIZE(path) < 1 || PyTuple_GET_SIZE(path) > 2 || !PyLong_CheckExact(PyTuple_GET_ITEM(r, 1)))
            goto bad;
        each->depth = (int)PyTuple_GET_SIZE(path);
        for (int f = 0; f < each->depth; f++) {
            PyObject *name = PyTuple_GET_ITEM(path, f);
            if (!PyUnicode_CheckExact(name)) goto bad;
            Py_INCREF(name);
            PyUnicode_InternInPlace(&name);
            each->name[f] = name;
        }
        long test = PyLong_AsLong(PyTuple_GET_ITEM(r, 1));
        if (test == -1 && PyErr_Occurred()) PyErr_Clear();     /* (out of range: not a test it knows) */
        each->test = test < IS_STR || test > IS_STR_IN ? 0 : (int)test;
        each->arg = Py_NewRef(PyTuple_GET_ITEM(r, 2));
        int overflow = 0;
        if (each->test == IS_FIELD)
            each->max = PyLong_CheckExact(each->arg) ? PyLong_AsLongLongAndOverflow(each->arg, &overflow) : -1;
        if (each->test < IS_STR || each->test > IS_STR_IN || overflow || (each->test == IS_FIELD && each->max < 0)
            || ((each->test == IS_IN || each->test == IS_STR_IN) && !PyTuple_CheckExact(each->arg))
            || (each->test == IS_TYPE && !PyType_Check(each->arg))) {
            rules_clear(&out);
            return 0;                               /* a test the C does not know: the Python's */
        }
    }
    *R = out;
    return 0;
bad:
    rules_clear(&out);
    PyErr_Clear();
    PyErr_SetString(PyExc_TypeError, "rules: None, or a tuple of (names, test, argument)");
    return -1;
}

/* world_setup(Handle, Commit, Lookup, well_handle, well_commit, well_lookup, TERMINAL, Checkpoint, IdMap,
               records, slotted, rules_handle, rules_commit): records (simkit.model.record) and other slotted
               types are read by offset, records built so too */
static PyObject *world_setup(PyObject *self, PyObject *args) {
    PyObject *h, *c, *l, *wh, *wc, *wl, *t, *cp, *im, *records, *slotted, *rh, *rc;
    if (!PyArg_ParseTuple(args, "O!O!O!OOOO!O!O!O!O!OO", &PyType_Type, &h, &PyType_Type, &c, &PyType_Type, &l, &wh,
                          &wc, &wl, &PyTuple_Type, &t, &PyType_Type, &cp, &PyType_Type, &im, &PyTuple_Type, &records,
                          &PyTuple_Type, &slotted, &rh, &rc))
        return NULL;
    if (!n_sink && intern_all() < 0) return NULL;
    if (rules_set(&rules_handle, rh) < 0 || rules_set(&rules_commit, rc) < 0) return NULL;
    Py_XSETREF(Handle_t, Py_NewRef(h)); Py_XSETREF(Commit_t, Py_NewRef(c)); Py_XSETREF(Lookup_t, Py_NewRef(l));
    Py_XSETREF(well_handle, Py_NewRef(wh)); Py_XSETREF(well_commit, Py_NewRef(wc));
    Py_XSETREF(well_lookup, Py_NewRef(wl)); Py_XSETREF(terminal, Py_NewRef(t));
    Py_XSETREF(Checkpoint_t, Py_NewRef(cp)); Py_XSETREF(IdMap_t, Py_NewRef(im));
    for (; n_layouts > 0; n_layouts--)
        for (int f = 0; f < layouts[n_layouts - 1].n; f++) Py_CLEAR(layouts[n_layouts - 1].name[f]);
    for (int record = 1; record >= 0; record--) {
        PyObject *types = record ? records : slotted;
        for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(types); k++) {
            if (layout_add(PyTuple_GET_ITEM(types, k), record) < 0) return NULL;
        }
    }
    Py_RETURN_NONE;
}

/* well(op) -> bool: does the C find op keeps every rule of its type? (tests/world/test_quick.py) */
static PyObject *well(PyObject *self, PyObject *op) {
    const Rules *rules = Py_TYPE(op) == (PyTypeObject *)Handle_t ? &rules_handle
                         : Py_TYPE(op) == (PyTypeObject *)Commit_t ? &rules_commit : NULL;
    return PyBool_FromLong(rules && keeps(rules, op));
}

static int in_terminal(PyObject *v) {
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(terminal); k++) {
        int eq = PyObject_RichCompareBool(v, PyTuple_GET_ITEM(terminal, k), Py_EQ);
        if (eq) return eq;
    }
    return 0;
}

/* An IdMap's parts, read once for one access (new references), and its codes array's buffer. */
typedef struct {
    PyObject *slots, *codes, *aside;
    long long base;
    Py_buffer view;
} Map;

static void map_close(Map *m) {
    if (m->view.obj) PyBuffer_Release(&m->view);
    Py_XDECREF(m->slots); Py_XDECREF(m->codes); Py_XDECREF(m->aside);
}

/* 0, or -1 with an error (m closed either way by map_close) */
static int map_open(PyObject *map, Map *m, int writable) {
    memset(m, 0, sizeof *m);
    PyObject *base = GET(map, n_base);
    if (!base) return -1;
    m->base = PyLong_AsLongLong(base);
    Py_DECREF(base);
    if ((m->base == -1 && PyErr_Occurred()) || !(m->slots = GET(map, n_slots)) || !(m->codes = GET(m->slots, n_codes))
        || !(m->aside = GET(map, n_aside)))
        return -1;
    if (!PyDict_CheckExact(m->aside)) { PyErr_SetString(PyExc_TypeError, "aside: a dict expected"); return -1; }
    if (PyObject_GetBuffer(m->codes, &m->view, PyBUF_FORMAT | PyBUF_ND | (writable ? PyBUF_WRITABLE : 0)) < 0)
        return -1;
    const char *f = m->view.format ? m->view.format : "B";
    if (m->view.ndim != 1 || !f[0] || f[1] || !strchr("BHILQ", f[0])) {
        PyErr_SetString(PyExc_TypeError, "codes: an array of unsigned integers expected");
        return -1;
    }
    return 0;
}

static Py_ssize_t map_len(const Map *m) { return m->view.len / m->view.itemsize; }

static uint64_t map_get(const Map *m, Py_ssize_t i) {
    const char *p = (const char *)m->view.buf;
    switch (m->view.itemsize) {
    case 1: return ((const uint8_t *)p)[i];
    case 2: return ((const uint16_t *)p)[i];
    case 4: return ((const uint32_t *)p)[i];
    default: return ((const uint64_t *)p)[i];
    }
}

/* 0; -1 if ``c`` does not fit the array's items (nothing written) */
static int map_put(Map *m, Py_ssize_t i, uint64_t c) {
    char *p = (char *)m->view.buf;
    switch (m->view.itemsize) {
    case 1: if (c > UINT8_MAX) return -1; ((uint8_t *)p)[i] = (uint8_t)c; return 0;
    case 2: if (c > UINT16_MAX) return -1; ((uint16_t *)p)[i] = (uint16_t)c; return 0;
    case 4: if (c > UINT32_MAX) return -1; ((uint32_t *)p)[i] = (uint32_t)c; return 0;
    default: ((uint64_t *)p)[i] = c; return 0;
    }
}

/* IdMap.at(position, default) on an opened map whose value table is ``table``: a new reference, or NULL */
static PyObject *map_value(const Map *m, PyObject *table, long long position, PyObject *dflt) {
    long long i = position - m->base;
    if (0 <= i && i < map_len(m)) {
        uint64_t c = map_get(m, (Py_ssize_t)i);
        if (c) return PySequence_GetItem(table, (Py_ssize_t)c);
    }
    if (!PyDict_GET_SIZE(m->aside)) return Py_NewRef(dflt);
    PyObject *key = PyLong_FromLongLong(position), *v = key ? PyDict_GetItemWithError(m->aside, key) : NULL;
    Py_XDECREF(key);
    return v ? Py_NewRef(v) : PyErr_Occurred() ? NULL : Py_NewRef(dflt);
}

/* IdMap.at(position, default): a new reference (``dflt`` when none), or NULL. */
static PyObject *idmap_at(PyObject *map, long long position, PyObject *dflt) {
    Map m;
    PyObject *table = NULL, *result = NULL;
    if (map_open(map, &m, 0) == 0 && (table = GET(m.slots, n_table))) result = map_value(&m, table, position, dflt);
    Py_XDECREF(table);
    map_close(&m);
    return result;
}

/* IdMap.set_at(position, v): the usual case here (a slot of the array, a value with a code that fits it, no
   value aside), any other by the method itself. 0, or -1 with an error. */
static int idmap_set_at(PyObject *map, PyObject *position, long long p, PyObject *v) {
    Map m;
    PyObject *code_map = NULL, *key = NULL, *code = NULL;
    int done = -1;
    if (map_open(map, &m, 1) < 0) goto out;
    long long i = p - m.base;
    Py_ssize_t n = map_len(&m);
    if (n && !PyDict_GET_SIZE(m.aside) && 0 <= i && i < n) {
        if (!(code_map = GET(m.slots, n_code_map))) goto out;
        key = PyUnicode_CheckExact(v) ? Py_NewRef(v) : PyTuple_Pack(2, (PyObject *)Py_TYPE(v), v);
        if (!key) goto out;
        code = PyDict_CheckExact(code_map) ? PyDict_GetItemWithError(code_map, key) : NULL;   /* borrowed */
        if (PyErr_Occurred()) goto out;
    }
    uint64_t c = code && PyLong_CheckExact(code) ? PyLong_AsUnsignedLongLong(code) : 0;
    if (PyErr_Occurred()) goto out;
    uint64_t was = c ? map_get(&m, (Py_ssize_t)i) : 0;
    if (!c || map_put(&m, (Py_ssize_t)i, c) < 0) {     /* anything else: the method's own path */
        map_close(&m);
        memset(&m, 0, sizeof m);
        PyObject *r = PyObject_CallMethodObjArgs(map, n_set_at, position, v, NULL);
        done = r ? 0 : -1;
        Py_XDECREF(r);
        goto out;
    }
    if (!was) {                                         /* IdMap._size: one more position held */
        PyObject *size = GET(map, n_size), *more = size ? PyNumber_Add(size, one) : NULL;
        int failed = !more || SET(map, n_size, more) < 0;
        Py_XDECREF(size); Py_XDECREF(more);
        if (failed) goto out;
    }
    done = 0;
out:
    map_close(&m);
    Py_XDECREF(code_map); Py_XDECREF(key);
    return done;
}

/* -- the two requests --------------------------------------------------------------------------------- */
/* the world's parts for one call of quick (new references), and what stays the same through it */
typedef struct {
    PyObject *sink, *store, *clock, *faults, *journal, *receipts, *outcomes, *env, *latency, *limit;
    int solo, external, all_ok;     /* (Sink._all_ok: every event of the stream is ``ok``) */
} Parts;

static void parts_clear(Parts *w) {
    Py_XDECREF(w->sink); Py_XDECREF(w->store); Py_XDECREF(w->clock); Py_XDECREF(w->faults);
    Py_XDECREF(w->journal); Py_XDECREF(w->receipts); Py_XDECREF(w->outcomes); Py_XDECREF(w->env);
    Py_XDECREF(w->latency); Py_XDECREF(w->limit);
}

static int parts_open(PyObject *world, Parts *w) {
    memset(w, 0, sizeof *w);
    PyObject *timing = NULL, *solo = NULL, *external = NULL, *all_ok = NULL;
    int ok = (w->sink = GET(world, n_sink)) && (w->store = GET(world, n_store)) && (w->clock = GET(world, n_clock))
        && (w->faults = GET(world, n_faults)) && (w->journal = GET(world, n_journal))
        && (w->receipts = GET(w->store, n_receipts)) && (w->outcomes = GET(w->receipts, n_outcomes))
        && (w->env = GET(w->clock, n_env)) && (timing = GET(world, n_timing))
        && (w->latency = GET(timing, n_latency)) && (w->limit = GET(timing, n_limit))
        && (solo = GET(world, n_solo)) && (external = GET(w->sink, n_external))
        && (w->external = PyObject_IsTrue(external)) >= 0 && (all_ok = GET(w->sink, n_all_ok));
    w->solo = solo == Py_True;
    w->all_ok = all_ok == Py_True;
    Py_XDECREF(timing); Py_XDECREF(solo); Py_XDECREF(external); Py_XDECREF(all_ok);
    return ok ? 0 : -1;
}

/* Does the request's well-formedness test answer True (1)? Anything else: 0. -1: it raised, the error kept
   (a signal's, Ctrl-C or the wall-clock guard's, raised in the test: the Python raises it from the same test,
   and asked again the test would not). */
static int quick_is_well(PyObject *test, PyObject *op) {
    PyObject *ok = PyObject_CallOneArg(test, op);
    if (!ok) return -1;
    int yes = ok == Py_True;
    Py_DECREF(ok);
    return yes;
}

/* World.handle's result for op, where it is ``apply`` with nothing written (1); 0: hand it over; -1: its
   well-formedness test raised. */
static int quick_handle(Parts *w, PyObject *op) {
    int well = !w->all_ok ? 0 : keeps(&rules_handle, op) ? 1 : quick_is_well(well_handle, op);
    if (well <= 0) return well;
    PyObject *event = GET(op, n_event), *behavior = event ? GET(event, n_behavior) : NULL;
    int yes = behavior && PyUnicode_CheckExact(behavior) && PyUnicode_Compare(behavior, s_ok) == 0;
    Py_XDECREF(event); Py_XDECREF(behavior);
    PyErr_Clear();
    return yes;
}

/* the clock's ``now``: env._now + ahead (a new reference) */
static PyObject *clock_now(Parts *w) {
    PyObject *t = GET(w->env, n_now_attr), *ahead = t ? GET(w->clock, n_ahead) : NULL;
    PyObject *now = ahead ? PyNumber_Add(t, ahead) : NULL;
    Py_XDECREF(t); Py_XDECREF(ahead);
    return now;
}

static PyObject *clock_tick(Parts *w) {
    PyObject *seq = GET(w->clock, n_seq), *next = seq ? PyNumber_Add(seq, one) : NULL;
    Py_XDECREF(seq);
    if (next && SET(w->clock, n_seq, next) < 0) Py_CLEAR(next);
    return next;
}

/* model.is_default_id for an exact str and a position in 0 .. 2**63 - 1: ``e`` and its digits
   (simkit/_native.c) */
int is_prefixed_digits(PyObject *s, const char *prefix, Py_ssize_t plen, long long p);
#define is_default_id(eid, p) is_prefixed_digits((eid), "e", 1, (p))

/* a Commit's fields (new references) */
typedef struct {
    PyObject *event, *eid, *pos, *outcome, *applied, *effect;
    long long p;
} Req;

static void req_clear(Req *r) {
    Py_XDECREF(r->event); Py_XDECREF(r->eid); Py_XDECREF(r->pos); Py_XDECREF(r->outcome);
    Py_XDECREF(r->applied); Py_XDECREF(r->effect);
}

/* Would World._commit_at_once journal op (World._journaled)? 1: yes (``r`` holds its fields), 0: hand it over
   (no error left), -1: its well-formedness test raised. Reads only. */
static int commit_is_quick(PyObject *world, Parts *w, PyObject *op, Req *r) {
    PyObject *quiet = NULL, *late = NULL, *now = NULL, *sum = NULL, *other = NULL, *held = NULL;
    int yes = 0, overflow;
    memset(r, 0, sizeof *r);
    int well = w->journal == Py_None || !w->solo ? 0
               : keeps(&rules_commit, op) ? 1 : quick_is_well(well_commit, op);
    if (well <= 0) return well;
    quiet = GET(w->faults, n_quiet);
    r->effect = quiet == Py_True ? GET(op, n_with_effect) : NULL;
    if (!r->effect || (r->effect == Py_True && w->external)) goto out;
    late = GET(world, n_late);
    if (!late || !PyLong_CheckExact(late) || PyLong_AsLong(late) != 0) goto out;
    now = clock_now(w); sum = now ? PyNumber_Add(now, w->latency) : NULL;
    if (!sum || PyObject_RichCompareBool(sum, w->limit, Py_LT) != 1) goto out;
    if (!(r->event = GET(op, n_event)) || !(r->eid = GET(r->event, n_id)) || !(r->pos = GET(r->event, n_position))
        || !(r->outcome = GET(op, n_outcome)) || !(r->applied = GET(op, n_applied)))
        goto out;
    if (!PyUnicode_CheckExact(r->eid) || !PyLong_CheckExact(r->pos)) goto out;
    r->p = PyLong_AsLongLongAndOverflow(r->pos, &overflow);        /* Receipts.keeps_by_position */
    if (overflow || r->p < 0 || !is_default_id(r->eid, r->p)) goto out;
    other = GET(w->receipts, n_other);
    if (!other || !PyDict_CheckExact(other) || PyDict_GET_SIZE(other)) goto out;   /* (an id aside: Python's) */
    held = idmap_at(w->outcomes, r->p, Py_None);                    /* MemoryStore.closed */
    yes = held && !in_terminal(held) && !PyErr_Occurred();
out:
    PyErr_Clear();
    Py_XDECREF(quiet); Py_XDECREF(late); Py_XDECREF(now); Py_XDECREF(sum); Py_XDECREF(other);
    Py_XDECREF(held);
    if (!yes) req_clear(r);
    return yes;
}

/* MemoryStore.hold's checkpoint: the one before if ``applied_position`` rose (a new reference), else None */
static PyObject *hold_checkpoint(Parts *w, PyObject *applied) {
    PyObject *cp = GET(w->store, n_checkpoint), *was = cp ? GET(cp, n_applied) : NULL;
    int rose = was ? PyObject_RichCompareBool(applied, was, Py_GT) : -1;
    Py_XDECREF(was);
    if (rose <= 0) {
        Py_XDECREF(cp);
        return rose < 0 ? NULL : Py_NewRef(Py_None);
    }
    PyObject *c = GET(cp, n_cursor), *v = c ? GET(cp, n_version) : NULL;
    PyObject *fields[3] = {c, applied, v}, *after = v ? make(Checkpoint_t, fields, 3) : NULL;
    int bad = !after || PyObject_SetAttr(w->store, n_checkpoint, after) < 0;
    Py_XDECREF(c); Py_XDECREF(v); Py_XDECREF(after);
    if (bad) Py_CLEAR(cp);
    return cp;
}

/* World._commit_at_once's journaled commit, once commit_is_quick said yes: 0, or -1 with an error. */
static int quick_commit(PyObject *world, Parts *w, Req *r, long worker) {
    PyObject *ahead = GET(w->clock, n_ahead), *more = ahead ? PyNumber_Add(ahead, w->latency) : NULL;
    PyObject *effect_seq = Py_NewRef(Py_None), *before = NULL, *cp = NULL, *seq = NULL, *now = NULL;
    PyObject *cursor = NULL, *cp_applied = NULL, *version = NULL, *place = NULL, *row = NULL, *w_obj = NULL;
    int failed = -1;
    Py_XDECREF(ahead);
    if (!more || SET(w->clock, n_ahead, more) < 0) goto out;
    if (r->effect == Py_True) {                                     /* Driver.record_effect: Sink.count */
        Py_SETREF(effect_seq, clock_tick(w));
        PyObject *count = effect_seq ? GET(w->sink, n_effect_count) : NULL;
        if (!count) goto out;
        int bad;
        if (Py_IS_TYPE(count, (PyTypeObject *)IdMap_t)) {
            PyObject *was = idmap_at(count, r->p, zero);
            PyObject *is = was ? PyNumber_Add(was, one) : NULL;
            bad = !is || idmap_set_at(count, r->pos, r->p, is) < 0;
            Py_XDECREF(was); Py_XDECREF(is);
        } else {
            PyObject *x = PyObject_CallMethodObjArgs(w->sink, n_count, r->eid, r->pos, NULL);
            bad = !x;
            Py_XDECREF(x);
        }
        Py_DECREF(count);
        if (bad) goto out;
    }
    if (idmap_set_at(w->outcomes, r->pos, r->p, r->outcome) < 0) goto out;  /* MemoryStore.hold */
    int terminal_now = in_terminal(r->outcome);
    if (terminal_now < 0) goto out;
    if (terminal_now) {
        PyObject *named = GET(w->store, n_named_at);
        int any = named ? PyObject_IsTrue(named) : -1;
        Py_XDECREF(named);
        if (any < 0) goto out;
        if (any) {
            PyObject *x = PyObject_CallMethodObjArgs(w->store, n_terminal_at, r->pos, r->eid, NULL);
            if (!x) goto out;
            Py_DECREF(x);
        }
    }
    if (!(before = hold_checkpoint(w, r->applied)) || !(cp = GET(w->store, n_checkpoint))
        || !(cursor = GET(cp, n_cursor)) || !(cp_applied = GET(cp, n_applied)) || !(version = GET(cp, n_version))
        || !(seq = clock_tick(w)) || !(now = clock_now(w)) || !(w_obj = PyLong_FromLong(worker)))
        goto out;
    PyObject *placed = GET(world, n_placed);                        /* World._place */
    if (placed && PyTuple_CheckExact(placed) && PyTuple_GET_SIZE(placed) == 2
        && PyTuple_GET_ITEM(placed, 0) == cursor)
        place = Py_NewRef(PyTuple_GET_ITEM(placed, 1));
    else if (placed)
        place = PyObject_CallMethodOneArg(world, n_place, cursor);
    Py_XDECREF(placed);
    if (!place) goto out;
    PyObject *step = PyUnicode_Compare(r->outcome, s_quarantined) == 0 ? s_quarantine : s_commit; /* commit_step */
    PyObject *args[13] = {effect_seq, seq, now, w_obj, r->eid, r->pos, r->outcome, step, cursor, cp_applied,
                          version, place, before != Py_None ? Py_True : Py_False};
    row = PyObject_Vectorcall(w->journal, args, 13, NULL);
    failed = row ? 0 : -1;
out:
    Py_XDECREF(more); Py_XDECREF(effect_seq); Py_XDECREF(before); Py_XDECREF(cp); Py_XDECREF(seq);
    Py_XDECREF(now); Py_XDECREF(cursor); Py_XDECREF(cp_applied); Py_XDECREF(version); Py_XDECREF(place);
    Py_XDECREF(row); Py_XDECREF(w_obj);
    return failed;
}

/* Receipts.keeps_by_position: a default id, at a position below 2**63, no receipt of it kept by id */
static int keeps_by_position(PyObject *eid, PyObject *pos, PyObject *other, long long *p) {
    int overflow;
    if (!PyUnicode_CheckExact(eid) || !PyLong_CheckExact(pos)) return 0;
    *p = PyLong_AsLongLongAndOverflow(pos, &overflow);
    if (overflow || *p < 0 || !is_default_id(eid, *p)) return 0;
    return PyDict_GET_SIZE(other) ? !PyDict_Contains(other, eid) : 1;      /* -1: an error */
}

/* World's Lookup (Driver.lookup: MemoryStore.lookup) of op's events: (by_id, by_position), or NULL. An event
   the usual case does not cover is looked up by the store's own methods (Receipts.get, MemoryStore.id_at).
   A list of events is well-formed too (ops._ADMITS): read as the tuple of its items. */
static PyObject *quick_lookup(Parts *w, PyObject *op) {
    PyObject *events = GET(op, n_events);
    if (events && PyList_CheckExact(events)) Py_SETREF(events, PyList_AsTuple(events));
    PyObject *other = events ? GET(w->receipts, n_other) : NULL;
    PyObject *named = other ? GET(w->store, n_named_at) : NULL, *table = NULL, *by_id = NULL, *by_pos = NULL;
    PyObject *result = NULL;
    Map m;
    memset(&m, 0, sizeof m);
    if (!named || !PyTuple_CheckExact(events) || !PyDict_CheckExact(other) || !PyDict_CheckExact(named)) {
        if (named) PyErr_SetString(PyExc_TypeError, "lookup: a tuple of events, and dicts aside, expected");
        goto out;
    }
    if (map_open(w->outcomes, &m, 0) < 0 || !(table = GET(m.slots, n_table)) || !(by_id = PyDict_New())
        || !(by_pos = PyDict_New()))
        goto out;
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(events); k++) {
        PyObject *e = PyTuple_GET_ITEM(events, k), *eid = GET(e, n_id), *pos = eid ? GET(e, n_position) : NULL;
        PyObject *out = NULL, *holder = NULL;
        long long p = 0;
        int keeps = pos ? keeps_by_position(eid, pos, other, &p) : -1, bad = keeps < 0;
        if (keeps > 0) {
            out = map_value(&m, table, p, Py_None);         /* the usual case: one slot answers both */
            bad = !out || (out != Py_None && PyDict_SetItem(by_id, eid, out) < 0);
            holder = bad || !PyDict_GET_SIZE(named) ? NULL : PyDict_GetItemWithError(named, pos);
            Py_XINCREF(holder);
            int closed = bad || PyErr_Occurred() ? -1 : holder ? 0 : in_terminal(out);
            bad |= closed < 0;
            if (closed > 0) holder = Py_NewRef(eid);
        } else if (!bad) {
            PyObject *r = PyObject_CallMethodOneArg(w->receipts, n_get, eid);
            bad = !r || (r != Py_None && (!PyTuple_Check(r) || PyTuple_GET_SIZE(r) < 1
                                          || PyDict_SetItem(by_id, eid, PyTuple_GET_ITEM(r, 0)) < 0));
            Py_XDECREF(r);
            holder = bad ? NULL : PyObject_CallMethodOneArg(w->store, n_id_at, pos);
            bad |= !holder;
        }
        if (!bad && holder && holder != Py_None) bad = PyDict_SetItem(by_pos, pos, holder) < 0;
        Py_XDECREF(eid); Py_XDECREF(pos); Py_XDECREF(out); Py_XDECREF(holder);
        if (bad) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "lookup: an event of the wrong shape");
            goto out;
        }
    }
    result = PyTuple_Pack(2, by_id, by_pos);
out:
    map_close(&m);
    Py_XDECREF(events); Py_XDECREF(other); Py_XDECREF(named); Py_XDECREF(table); Py_XDECREF(by_id);
    Py_XDECREF(by_pos);
    return result;
}

/* the exception set, taken as a value with its traceback (a new reference) */
static PyObject *fetched(void) {
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    if (tb && value) PyException_SetTraceback(value, tb);
    Py_XDECREF(type); Py_XDECREF(tb);
    return value ? value : Py_NewRef(Py_None);
}

/* simkit/_native.c: a Journal's rows buffered while quick runs */
int journal_begin(PyObject *journal);
int journal_end(PyObject *journal);

/* quick(world, gen, result, left, worker) -> (op, left, failed) */
static PyObject *quick(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 5 || !Handle_t) {
        PyErr_SetString(PyExc_TypeError, "quick(world, gen, result, left, worker), after world_setup()");
        return NULL;
    }
    PyObject *world = args[0], *gen = args[1];
    long long left = PyLong_AsLongLong(args[3]);
    long worker = PyLong_AsLong(args[4]);
    if (PyErr_Occurred()) return NULL;
    Parts w;
    if (parts_open(world, &w) < 0) { parts_clear(&w); return NULL; }
    PyObject *result = Py_NewRef(args[2]), *op = NULL, *failed = Py_None;
    int buffered = journal_begin(w.journal);
    while (1) {
        PySendResult sent = PyIter_Send(gen, result, &op);
        Py_DECREF(result);
        result = NULL;
        if (sent == PYGEN_ERROR) break;
        if (sent == PYGEN_RETURN) {                 /* the generator returned: StopIteration, as send() raises */
            PyObject *stop = PyObject_CallOneArg(PyExc_StopIteration, op);
            if (stop) { PyErr_SetObject(PyExc_StopIteration, stop); Py_DECREF(stop); }
            Py_CLEAR(op);
            break;
        }
        if (--left == 0) break;
        PyTypeObject *t = Py_TYPE(op);
        int is = 0;                                 /* -1: a well-formedness test raised (failed) */
        if ((PyObject *)t == Handle_t && (is = quick_handle(&w, op)) > 0) {
            result = Py_NewRef(s_apply);
        } else if ((PyObject *)t == Lookup_t && (is = quick_is_well(well_lookup, op)) > 0) {
            if (!(result = quick_lookup(&w, op))) {
                failed = fetched();
                break;
            }
        } else if ((PyObject *)t == Commit_t) {
            Req r;
            if ((is = commit_is_quick(world, &w, op, &r)) <= 0) {
                if (is < 0) failed = fetched();
                break;
            }
            int bad = quick_commit(world, &w, &r, worker);
            req_clear(&r);
            if (bad) {
                failed = fetched();
                break;
            }
            result = Py_NewRef(Py_True);
        } else {
            if (is < 0) failed = fetched();
            else PyErr_Clear();
            break;
        }
        Py_CLEAR(op);
    }
    if (buffered) {                                 /* the rows buffered, written before anything reads them */
        PyObject *type = NULL, *value = NULL, *tb = NULL;
        if (!op) PyErr_Fetch(&type, &value, &tb);   /* the consumer's exception, or its StopIteration */
        if (journal_end(w.journal) == 0) {
            if (!op) PyErr_Restore(type, value, tb);
        } else if (!op) {
            Py_XDECREF(type); Py_XDECREF(value); Py_XDECREF(tb);
        } else if (failed == Py_None) {
            failed = fetched();
        } else PyErr_Clear();
    }
    parts_clear(&w);
    if (!op) return NULL;
    PyObject *out = Py_BuildValue("(NLO)", op, left, failed);
    if (failed != Py_None) Py_DECREF(failed);
    return out;
}

/* events_of(positions, codes, table, rows, Event) -> tuple | None: EventTable.event of each row, the table's
   ids all default (``e`` and the position's digits), its behaviours ``table[codes[row]]``; None (the Python's
   to build) if a row is not an index of both columns from 0. */
static PyObject *events_of(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 5) { PyErr_SetString(PyExc_TypeError, "events_of(positions, codes, table, rows, Event)"); return NULL; }
    PyObject *rows = PySequence_Tuple(args[3]), *out = NULL;     /* (its own: an Event's __init__ may run) */
    if (!rows) return NULL;
    Py_buffer pv = {0}, cv = {0};
    if (PyObject_GetBuffer(args[0], &pv, PyBUF_FORMAT | PyBUF_ND) < 0
        || PyObject_GetBuffer(args[1], &cv, PyBUF_FORMAT | PyBUF_ND) < 0)
        goto done;
    if (!pv.format || strcmp(pv.format, "q") || !cv.format || !strchr("BHILQ", cv.format[0]) || cv.format[1]
        || !PyList_CheckExact(args[2])) {
        PyErr_SetString(PyExc_TypeError, "events_of: positions array('q'), unsigned codes, a list of values");
        goto done;
    }
    Map codes = {.view = cv};                       /* (map_get reads its view only) */
    Py_ssize_t n = PySequence_Fast_GET_SIZE(rows), np = pv.len / 8, nc = cv.len / cv.itemsize;
    PyObject **items = PySequence_Fast_ITEMS(rows);
    for (Py_ssize_t k = 0; k < n; k++) {
        Py_ssize_t i = PyLong_CheckExact(items[k]) ? PyLong_AsSsize_t(items[k]) : -1;
        if (i < 0 || i >= np || i >= nc) { PyErr_Clear(); out = Py_NewRef(Py_None); goto done; }
    }
    if (!(out = PyTuple_New(n))) goto done;
    for (Py_ssize_t k = 0; k < n; k++) {
        Py_ssize_t i = PyLong_AsSsize_t(items[k]);
        long long p = ((const int64_t *)pv.buf)[i];
        uint64_t c = map_get(&codes, i);
        PyObject *id = PyUnicode_FromFormat("e%lld", p), *pos = id ? PyLong_FromLongLong(p) : NULL;
        PyObject *behavior = pos ? PySequence_GetItem(args[2], (Py_ssize_t)c) : NULL, *e = NULL;
        if (behavior) {
            PyObject *fields[3] = {id, pos, behavior};
            e = make(args[4], fields, 3);
        }
        Py_XDECREF(id); Py_XDECREF(pos); Py_XDECREF(behavior);
        if (!e) { Py_CLEAR(out); goto done; }
        PyTuple_SET_ITEM(out, k, e);
    }
done:
    if (pv.obj) PyBuffer_Release(&pv);
    if (cv.obj) PyBuffer_Release(&cv);
    Py_DECREF(rows);
    return out;
}

PyMethodDef world_methods[] = {
    {"events_of", (PyCFunction)(void (*)(void))events_of, METH_FASTCALL,
     "events_of(positions, codes, table, rows, Event) -> tuple | None: a page's events, ids all default."},
    {"world_setup", world_setup, METH_VARARGS,
     "world_setup(Handle, Commit, Lookup, well_handle, well_commit, well_lookup, TERMINAL, Checkpoint, IdMap, "
     "records, slotted, rules_handle, rules_commit): quick's constants."},
    {"well", well, METH_O, "well(op) -> bool: does op keep every rule of its type, as the C tests them?"},
    {"quick", (PyCFunction)(void (*)(void))quick, METH_FASTCALL,
     "quick(world, gen, result, left, worker) -> (op, left, failed): a worker's usual requests at once."},
    {NULL, NULL, 0, NULL},
};
