/* simkit._native, stage 2: the world's quick request path in C (docs/performance.md, "the native core, stage 2").

quick(world, gen, result, left, worker) drives one worker's consumer generator as World._worker does: it sends
``result``, counts the request against the progress guard's ``left``, and executes at once the two requests
of the usual event: a ``Handle`` of an ``ok`` event where every event is ``ok`` (World.handle: ``apply``), and
a ``Commit`` that World._commit_at_once would journal (World._journaled: a default id with no terminal receipt,
on the memory store, no fault able to strike, one worker). It returns (op, left, failed) at the first request it
leaves to Python: one of any other kind or case, one whose well-formedness test does not answer True, or the
one that brings ``left`` to 0 (all unexecuted: ``failed`` is None); or one whose execution raised ``failed``
after it began (its state as World._journaled's would be). It makes the same state changes and rows, in the
same order, as the Python it stands for, which stays the reference (``SIMKIT_NATIVE=0``): tests/world/
test_quick.py holds the two equal. Anything it cannot read as expected, it hands over before changing a thing;
a value-keeping step it does not do itself (a new code, a slot outside the array), it asks of the Python
method that does it. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

/* set once by world_setup(): the request types, their well-formedness tests, and the model's constants */
static PyObject *zero, *one;
static PyObject *Handle_t, *Commit_t, *well_handle, *well_commit, *terminal, *Checkpoint_t, *IdMap_t, *s_apply;

static PyObject *n_sink, *n_store, *n_clock, *n_faults, *n_timing, *n_journal, *n_solo, *n_late, *n_latency,
    *n_limit, *n_quiet, *n_external, *n_all_ok, *n_event, *n_behavior, *n_id, *n_position, *n_outcome,
    *n_applied, *n_with_effect, *n_receipts, *n_other, *n_outcomes, *n_base, *n_slots, *n_codes, *n_table,
    *n_code_map, *n_aside, *n_size, *n_effect_count, *n_env, *n_now_attr, *n_ahead, *n_seq, *n_checkpoint,
    *n_cursor, *n_version, *n_named_at, *n_placed, *n_place, *n_set_at, *n_count, *n_terminal_at, *s_ok,
    *s_quarantined, *s_quarantine, *s_commit;

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
    N(s_quarantined, "quarantined") N(s_quarantine, "quarantine") N(s_commit, "commit")
#undef N
    if (!(zero = PyLong_FromLong(0)) || !(one = PyLong_FromLong(1))) return -1;
    return 0;
}

/* world_setup(Handle, Commit, well_handle, well_commit, TERMINAL, Checkpoint, IdMap) */
static PyObject *world_setup(PyObject *self, PyObject *args) {
    PyObject *h, *c, *wh, *wc, *t, *cp, *im;
    if (!PyArg_ParseTuple(args, "O!O!OOO!O!O!", &PyType_Type, &h, &PyType_Type, &c, &wh, &wc, &PyTuple_Type, &t,
                          &PyType_Type, &cp, &PyType_Type, &im))
        return NULL;
    if (!n_sink && intern_all() < 0) return NULL;
    Py_XSETREF(Handle_t, Py_NewRef(h)); Py_XSETREF(Commit_t, Py_NewRef(c));
    Py_XSETREF(well_handle, Py_NewRef(wh)); Py_XSETREF(well_commit, Py_NewRef(wc));
    Py_XSETREF(terminal, Py_NewRef(t)); Py_XSETREF(Checkpoint_t, Py_NewRef(cp)); Py_XSETREF(IdMap_t, Py_NewRef(im));
    Py_RETURN_NONE;
}

/* -- reading: a new reference, or NULL (an error set) ---------------------------------------------------- */
#define GET(obj, name) PyObject_GetAttr((obj), (name))

static int in_terminal(PyObject *v) {
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(terminal); k++) {
        int eq = PyObject_RichCompareBool(v, PyTuple_GET_ITEM(terminal, k), Py_EQ);
        if (eq) return eq;
    }
    return 0;
}

/* an array.array's item i (no bounds check: the caller's), or -1 with an error */
static long long array_item(PyObject *arr, Py_ssize_t i) {
    PyObject *v = PySequence_GetItem(arr, i);
    if (!v) return -1;
    long long x = PyLong_AsLongLong(v);
    Py_DECREF(v);
    return x;
}

/* IdMap.at(position, default): a new reference (``dflt`` when none), or NULL. */
static PyObject *idmap_at(PyObject *map, long long position, PyObject *dflt) {
    PyObject *base = GET(map, n_base), *slots = base ? GET(map, n_slots) : NULL;
    PyObject *codes = slots ? GET(slots, n_codes) : NULL, *result = NULL;
    if (!codes) goto done;
    long long b = PyLong_AsLongLong(base);
    Py_ssize_t n = PySequence_Size(codes);
    if ((b == -1 || n < 0) && PyErr_Occurred()) goto done;
    long long i = position - b;
    if (0 <= i && i < n) {
        long long c = array_item(codes, (Py_ssize_t)i);
        if (c == -1 && PyErr_Occurred()) goto done;
        if (c) {
            PyObject *table = GET(slots, n_table);
            if (table) { result = PySequence_GetItem(table, (Py_ssize_t)c); Py_DECREF(table); }
            goto done;
        }
    }
    PyObject *aside = GET(map, n_aside);
    if (!aside) goto done;
    int nonempty = PyObject_IsTrue(aside);
    if (nonempty > 0) {
        PyObject *key = PyLong_FromLongLong(position);
        result = key ? PyDict_GetItemWithError(aside, key) : NULL;
        Py_XDECREF(key);
        if (result) Py_INCREF(result);
        else if (!PyErr_Occurred()) result = Py_NewRef(dflt);
    } else if (nonempty == 0) result = Py_NewRef(dflt);
    Py_DECREF(aside);
done:
    Py_XDECREF(base); Py_XDECREF(slots); Py_XDECREF(codes);
    return result;
}

/* IdMap.set_at(position, v): the usual case here (a slot of the array, a value with a code), any other by
   the method itself. 0, or -1 with an error. */
static int idmap_set_at(PyObject *map, PyObject *position, long long p, PyObject *v) {
    PyObject *base = GET(map, n_base), *slots = base ? GET(map, n_slots) : NULL;
    PyObject *codes = slots ? GET(slots, n_codes) : NULL, *aside = codes ? GET(map, n_aside) : NULL;
    PyObject *code_map = aside ? GET(slots, n_code_map) : NULL, *key = NULL;
    int done = -1;
    if (!code_map) goto out;
    Py_ssize_t n = PySequence_Size(codes);
    int aside_used = PyObject_IsTrue(aside);
    long long b = PyLong_AsLongLong(base);
    if (n < 0 || aside_used < 0 || (b == -1 && PyErr_Occurred())) goto out;
    long long i = p - b;
    key = PyUnicode_CheckExact(v) ? Py_NewRef(v) : PyTuple_Pack(2, (PyObject *)Py_TYPE(v), v);
    PyObject *code = key && n && !aside_used && 0 <= i && i < n ? PyDict_GetItemWithError(code_map, key) : NULL;
    if (PyErr_Occurred()) goto out;
    if (!code) {                                /* anything else: the method's own path */
        PyObject *r = PyObject_CallMethodObjArgs(map, n_set_at, position, v, NULL);
        done = r ? 0 : -1;
        Py_XDECREF(r);
        goto out;
    }
    long long was = array_item(codes, (Py_ssize_t)i);
    if (was == -1 && PyErr_Occurred()) goto out;
    if (!was) {
        PyObject *size = GET(map, n_size), *more = size ? PyNumber_Add(size, one) : NULL;
        int failed = !more || PyObject_SetAttr(map, n_size, more) < 0;
        Py_XDECREF(size); Py_XDECREF(more);
        if (failed) goto out;
    }
    done = PySequence_SetItem(codes, (Py_ssize_t)i, code);
out:
    Py_XDECREF(base); Py_XDECREF(slots); Py_XDECREF(codes); Py_XDECREF(aside); Py_XDECREF(code_map);
    Py_XDECREF(key);
    return done;
}

/* -- the two requests --------------------------------------------------------------------------------- */
typedef struct {
    PyObject *sink, *store, *clock, *faults, *timing, *journal, *receipts, *outcomes, *env;
} Parts;

static void parts_clear(Parts *w) {
    Py_XDECREF(w->sink); Py_XDECREF(w->store); Py_XDECREF(w->clock); Py_XDECREF(w->faults);
    Py_XDECREF(w->timing); Py_XDECREF(w->journal); Py_XDECREF(w->receipts); Py_XDECREF(w->outcomes);
    Py_XDECREF(w->env);
}

/* World.handle's result for op, where it is ``apply`` with nothing written (1); 0: hand it over. */
static int quick_handle(Parts *w, PyObject *op) {
    PyObject *ok = PyObject_CallOneArg(well_handle, op);
    int yes = ok == Py_True;
    Py_XDECREF(ok);
    if (!yes) return 0;
    PyObject *all_ok = GET(w->sink, n_all_ok), *event = GET(op, n_event);
    PyObject *behavior = event ? GET(event, n_behavior) : NULL;
    yes = all_ok == Py_True && behavior && PyUnicode_CheckExact(behavior)
        && PyUnicode_Compare(behavior, s_ok) == 0;
    Py_XDECREF(all_ok); Py_XDECREF(event); Py_XDECREF(behavior);
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
    if (next && PyObject_SetAttr(w->clock, n_seq, next) < 0) Py_CLEAR(next);
    return next;
}

/* Would World._commit_at_once journal op (World._journaled)? 1: yes, 0: hand it over (no error left).
   Reads only. */
static int commit_is_quick(PyObject *world, Parts *w, PyObject *op, PyObject **latency) {
    PyObject *ok = PyObject_CallOneArg(well_commit, op), *quiet = NULL, *effect = NULL, *external = NULL;
    PyObject *solo = NULL, *late = NULL, *now = NULL, *limit = NULL, *sum = NULL, *event = NULL, *eid = NULL;
    PyObject *pos = NULL, *other = NULL, *held = NULL;
    int yes = 0;
    if (ok != Py_True || w->journal == Py_None) goto out;
    quiet = GET(w->faults, n_quiet); effect = quiet == Py_True ? GET(op, n_with_effect) : NULL;
    external = effect ? GET(w->sink, n_external) : NULL;
    if (!external || (effect == Py_True && PyObject_IsTrue(external))) goto out;
    solo = GET(world, n_solo); late = solo == Py_True ? GET(world, n_late) : NULL;
    if (!late || !PyLong_CheckExact(late) || PyLong_AsLong(late) != 0) goto out;
    *latency = GET(w->timing, n_latency); now = *latency ? clock_now(w) : NULL;
    limit = now ? GET(w->timing, n_limit) : NULL; sum = limit ? PyNumber_Add(now, *latency) : NULL;
    if (!sum || PyObject_RichCompareBool(sum, limit, Py_LT) != 1) goto out;
    event = GET(op, n_event); eid = event ? GET(event, n_id) : NULL; pos = eid ? GET(event, n_position) : NULL;
    if (!pos || !PyUnicode_CheckExact(eid) || !PyLong_CheckExact(pos)) goto out;
    int overflow;
    long long p = PyLong_AsLongLongAndOverflow(pos, &overflow);      /* Receipts.keeps_by_position */
    if (overflow || p < 0) goto out;
    PyObject *id = PyUnicode_FromFormat("e%lld", p);
    int is_default = id ? PyUnicode_Compare(eid, id) == 0 : 0;
    Py_XDECREF(id);
    other = is_default ? GET(w->receipts, n_other) : NULL;
    if (!other || !PyDict_CheckExact(other) || PyDict_GET_SIZE(other)) goto out;  /* (an id aside: Python's) */
    held = idmap_at(w->outcomes, p, Py_None);                       /* MemoryStore.closed */
    yes = held && !in_terminal(held) && !PyErr_Occurred();
out:
    if (!yes) Py_CLEAR(*latency);
    PyErr_Clear();
    Py_XDECREF(ok); Py_XDECREF(quiet); Py_XDECREF(effect); Py_XDECREF(external); Py_XDECREF(solo);
    Py_XDECREF(late); Py_XDECREF(now); Py_XDECREF(limit); Py_XDECREF(sum); Py_XDECREF(event); Py_XDECREF(eid);
    Py_XDECREF(pos); Py_XDECREF(other); Py_XDECREF(held);
    return yes;
}

/* World._commit_at_once's journaled commit of op, once commit_is_quick said yes: 0, or -1 with an error. */
static int quick_commit(PyObject *world, Parts *w, PyObject *op, PyObject *latency, long worker) {
    PyObject *ahead = GET(w->clock, n_ahead), *more = ahead ? PyNumber_Add(ahead, latency) : NULL;
    PyObject *event = NULL, *eid = NULL, *pos = NULL, *outcome = NULL, *applied = NULL, *effect = NULL;
    PyObject *effect_seq = Py_NewRef(Py_None), *cp = NULL, *before_applied = NULL, *seq = NULL, *now = NULL;
    PyObject *cursor = NULL, *cp_applied = NULL, *version = NULL, *place = NULL, *row = NULL, *w_obj = NULL;
    int failed = -1, raised = 0;
    Py_XDECREF(ahead);
    if (!more || PyObject_SetAttr(w->clock, n_ahead, more) < 0) goto out;
    event = GET(op, n_event); eid = event ? GET(event, n_id) : NULL; pos = eid ? GET(event, n_position) : NULL;
    outcome = pos ? GET(op, n_outcome) : NULL; applied = outcome ? GET(op, n_applied) : NULL;
    effect = applied ? GET(op, n_with_effect) : NULL;
    if (!effect) goto out;
    long long p = PyLong_AsLongLong(pos);
    if (effect == Py_True) {                                        /* Driver.record_effect: Sink.count */
        Py_SETREF(effect_seq, clock_tick(w));
        PyObject *count = effect_seq ? GET(w->sink, n_effect_count) : NULL;
        if (!count) goto out;
        int bad;
        if (Py_IS_TYPE(count, (PyTypeObject *)IdMap_t)) {
            PyObject *was = idmap_at(count, p, zero);
            PyObject *is = was ? PyNumber_Add(was, one) : NULL;
            bad = !is || idmap_set_at(count, pos, p, is) < 0;
            Py_XDECREF(was); Py_XDECREF(is);
        } else {
            PyObject *r = PyObject_CallMethodObjArgs(w->sink, n_count, eid, pos, NULL);
            bad = !r;
            Py_XDECREF(r);
        }
        Py_DECREF(count);
        if (bad) goto out;
    }
    if (idmap_set_at(w->outcomes, pos, p, outcome) < 0) goto out;  /* MemoryStore.hold */
    int terminal_now = in_terminal(outcome);
    if (terminal_now < 0) goto out;
    if (terminal_now) {
        PyObject *named = GET(w->store, n_named_at);
        int any = named ? PyObject_IsTrue(named) : -1;
        Py_XDECREF(named);
        if (any < 0) goto out;
        if (any) {
            PyObject *r = PyObject_CallMethodObjArgs(w->store, n_terminal_at, pos, eid, NULL);
            if (!r) goto out;
            Py_DECREF(r);
        }
    }
    cp = GET(w->store, n_checkpoint); before_applied = cp ? GET(cp, n_applied) : NULL;
    if (!before_applied || (raised = PyObject_RichCompareBool(applied, before_applied, Py_GT)) < 0) goto out;
    if (raised) {
        PyObject *c = GET(cp, n_cursor), *v = c ? GET(cp, n_version) : NULL;
        PyObject *after = v ? PyObject_CallFunctionObjArgs(Checkpoint_t, c, applied, v, NULL) : NULL;
        Py_XDECREF(c); Py_XDECREF(v);
        if (!after) goto out;
        int bad = PyObject_SetAttr(w->store, n_checkpoint, after);
        Py_DECREF(after);
        if (bad < 0) goto out;
        Py_SETREF(cp, GET(w->store, n_checkpoint));
        if (!cp) goto out;
    }
    cursor = GET(cp, n_cursor); cp_applied = cursor ? GET(cp, n_applied) : NULL;
    version = cp_applied ? GET(cp, n_version) : NULL;
    if (!version || !(seq = clock_tick(w)) || !(now = clock_now(w)) || !(w_obj = PyLong_FromLong(worker)))
        goto out;
    PyObject *placed = GET(world, n_placed);                        /* World._place */
    if (placed && PyTuple_CheckExact(placed) && PyTuple_GET_SIZE(placed) == 2
        && PyTuple_GET_ITEM(placed, 0) == cursor)
        place = Py_NewRef(PyTuple_GET_ITEM(placed, 1));
    else if (placed)
        place = PyObject_CallMethodOneArg(world, n_place, cursor);
    Py_XDECREF(placed);
    if (!place) goto out;
    PyObject *step = PyUnicode_Compare(outcome, s_quarantined) == 0 ? s_quarantine : s_commit;   /* commit_step */
    PyObject *args[13] = {effect_seq, seq, now, w_obj, eid, pos, outcome, step, cursor, cp_applied, version, place,
                          raised ? Py_True : Py_False};
    row = PyObject_Vectorcall(w->journal, args, 13, NULL);
    failed = row ? 0 : -1;
out:
    Py_XDECREF(more); Py_XDECREF(event); Py_XDECREF(eid); Py_XDECREF(pos); Py_XDECREF(outcome);
    Py_XDECREF(applied); Py_XDECREF(effect); Py_XDECREF(effect_seq); Py_XDECREF(cp); Py_XDECREF(before_applied);
    Py_XDECREF(seq); Py_XDECREF(now); Py_XDECREF(cursor); Py_XDECREF(cp_applied); Py_XDECREF(version);
    Py_XDECREF(place); Py_XDECREF(row); Py_XDECREF(w_obj);
    return failed;
}

static int parts_open(PyObject *world, Parts *w) {
    memset(w, 0, sizeof *w);
    if (!(w->sink = GET(world, n_sink)) || !(w->store = GET(world, n_store)) || !(w->clock = GET(world, n_clock))
        || !(w->faults = GET(world, n_faults)) || !(w->timing = GET(world, n_timing))
        || !(w->journal = GET(world, n_journal)) || !(w->receipts = GET(w->store, n_receipts))
        || !(w->outcomes = GET(w->receipts, n_outcomes)) || !(w->env = GET(w->clock, n_env)))
        return -1;
    return 0;
}

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
        if ((PyObject *)t == Handle_t && quick_handle(&w, op)) {
            result = Py_NewRef(s_apply);
        } else if ((PyObject *)t == Commit_t) {
            PyObject *latency = NULL;
            if (!commit_is_quick(world, &w, op, &latency)) break;
            int bad = quick_commit(world, &w, op, latency, worker);
            Py_DECREF(latency);
            if (bad) {
                PyObject *type, *value, *tb;
                PyErr_Fetch(&type, &value, &tb);
                PyErr_NormalizeException(&type, &value, &tb);
                if (tb) PyException_SetTraceback(value, tb);
                Py_XDECREF(type); Py_XDECREF(tb);
                failed = value ? value : Py_NewRef(Py_None);
                break;
            }
            result = Py_NewRef(Py_True);
        } else {
            PyErr_Clear();
            break;
        }
        Py_CLEAR(op);
    }
    parts_clear(&w);
    if (!op) return NULL;
    PyObject *out = Py_BuildValue("(NLO)", op, left, failed);
    if (failed != Py_None) Py_DECREF(failed);
    return out;
}

PyMethodDef world_methods[] = {
    {"world_setup", world_setup, METH_VARARGS,
     "world_setup(Handle, Commit, well_handle, well_commit, TERMINAL, Checkpoint, IdMap): quick's constants."},
    {"quick", (PyCFunction)(void (*)(void))quick, METH_FASTCALL,
     "quick(world, gen, result, left, worker) -> (op, left, failed): a worker's usual requests at once."},
    {NULL, NULL, 0, NULL},
};
