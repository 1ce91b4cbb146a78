"""``simkit serve`` and ``simkit service`` from the command line: output, bad input (one line, exit 2), and a
real server process on 127.0.0.1 that is always stopped."""
from __future__ import annotations

import json
import subprocess
import sys

import httpx
import pytest

from simkit.cli import main
from simkit.service import DEV_SCOPE
from simkit.service.config import build_service


def test_service_json_shows_the_correct_client_ok_and_the_wrong_ones_failing(capsys):
    assert main(["service", "checkpoint_service", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert {r["client"]: r["ok"] for r in out["results"]} == {"correct": True, "new_key_retry": False,
                                                             "reset_on_409": False}


def test_service_explore_counts_schedules(capsys):
    assert main(["service", "checkpoint_service", "--client", "correct", "--explore", "--max-crashes", "1",
                 "--lost-responses", "1", "--horizon", "1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["explore"] == [{"client": "correct", "runs": 8, "failing": 0, "first_failing": None}]


def test_service_explore_on_top_of_the_scenarios_own_faults(capsys):
    """--with-scenario-faults: every schedule keeps checkpoint_service's three lost replies (worker 2's too)
    and adds its own; the correct client still survives every one, new_key_retry does not."""
    argv = ["service", "checkpoint_service", "--explore", "--max-crashes", "1", "--lost-responses", "1",
            "--horizon", "3", "--with-scenario-faults", "--json"]
    assert main(argv + ["--client", "correct"]) == 0
    (correct,) = json.loads(capsys.readouterr().out)["explore"]
    assert (correct["runs"], correct["failing"]) == (30, 0)  # (1, 2) is already lost: 2 new losses, not 3
    assert main(argv + ["--client", "new_key_retry"]) == 0
    (shortcut,) = json.loads(capsys.readouterr().out)["explore"]
    assert shortcut["failing"] > 0 and [2, 3] in shortcut["first_failing"]["lost_writes"]


@pytest.mark.parametrize("argv", [
    ["service", "nope"], ["service", "checkpoint_service", "--client", "nope"],
    ["service", "checkpoint_service", "--version", "3"], ["serve", "--port", "70000"],
    ["serve", "--fault", "explode"], ["serve", "--fault", "lose-reply@nowhere"],
    ["serve", "--fault", "lose-reply#0"],
    ["serve", "--config", "/nonexistent/simkit.toml"], ["serve", "--grant", "dev=memory_fly"],
    ["serve", "--credential", "no-equals-sign"],
])
def test_bad_input_is_one_line_and_exit_status_2(capsys, argv):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("simkit: ") and err.count("\n") == 1


def test_config_file_adds_subjects_grants_journals_and_faults(tmp_path):
    cfg = tmp_path / "serve.toml"
    cfg.write_text('faults = ["lose-reply@write#2"]\n'
                   '[[subjects]]\nid = "alice"\ncredentials = ["alice-token"]\nrevoked = ["alice-old"]\n'
                   '[[subjects.grants]]\nscope = {project_id = "project", agent_id = "agent"}\n'
                   'capabilities = ["memory_read", "memory_checkpoint"]\n'
                   '[[journals]]\nscope = {project_id = "other"}\nchanges = 2\n')
    svc, faults = build_service(config=str(cfg), credentials=["bob-token=bob"], grants=["bob=memory_read"])
    assert svc.credentials["alice-token"] == "alice" and "alice-old" in svc.revoked
    assert svc.subjects["alice"].grants[tuple(DEV_SCOPE.values())] == {"memory_read", "memory_checkpoint"}
    assert svc.subjects["bob"].grants[tuple(DEV_SCOPE.values())] == {"memory_read"}
    assert svc.journals[("tenant", ("other", None, None, "shared"))].head == 2
    assert [(f.kind, f.route, f.nth) for f in faults] == [("lose-reply", "write", 2)]


def test_bad_config_file_is_one_line_naming_the_file(tmp_path, capsys):
    cfg = tmp_path / "bad.toml"
    cfg.write_text('[[subjects]]\nid = "x"\n[[subjects.grants]]\nscope = {project_id = ""}\ncapabilities = '
                   '[]\n')
    assert main(["serve", "--config", str(cfg), "--port", "0"]) == 2
    err = capsys.readouterr().err
    assert str(cfg) in err and err.count("\n") == 1


def test_simkit_serve_process_answers_on_127_0_0_1_and_is_stopped():
    proc = subprocess.Popen([sys.executable, "-m", "simkit", "serve", "--port", "0", "--log-level", "warning",
                             "--fault", "lose-reply@write#1"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        assert line.startswith("simkit serve: http://127.0.0.1:"), \
            (line, proc.stderr.read() if proc.poll() is not None else "")
        url = line.split()[2]
        with httpx.Client(base_url=url, headers={"Authorization": "Bearer dev"}, timeout=10) as c:
            page = c.post("/api/v1/memory/changes",
                          json={"contract_version": 1, "scope": DEV_SCOPE, "query": {"limit": 2}})
            assert page.status_code == 200 and page.headers["cache-control"] == "no-store"
            assert page.json()["high_watermark"]["sequence"] == 5
            body = {"scope": DEV_SCOPE, "command": {"contract_version": 1, "idempotency_key": "k1",
                                                    "consumer_id": "cc",
                                                    "expected_revision": 0,
                                                    "cursor": page.json()["next_cursor"]}}
            with pytest.raises(httpx.RemoteProtocolError):
                c.post("/api/v1/memory/checkpoints", json=body)          # the start-up fault drops this reply
            again = c.post("/api/v1/memory/checkpoints", json=body)
            assert again.status_code == 200 and again.json()["receipt"]["checkpoint"]["revision"] == 1
            assert "/api/v1/memory/checkpoints" in c.get("/openapi.json").json()["paths"]
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        proc.stdout.close()
        proc.stderr.close()


@pytest.mark.parametrize("text, message", [
    ("subjects = 5\n", "subjects: expected an array of tables ([[subjects]]), got int 5"),
    ("journals = 3\n", "journals: expected an array of tables ([[journals]]), got int 3"),
    ("faults = [1]\n", 'faults: expected an array of strings like "lose-reply@write#2", got [1]'),
    ('[[subjects]]\nid = "alice"\ncredentials = "tok"\n',
     "subjects[0].credentials: expected an array of non-empty strings, got 'tok'"),
    ('[[subjects]]\nid = "alice"\ntenant = 5\n',
     "subjects[0].tenant: expected a non-empty string, got int 5"),
    ('[[subjects]]\nid = "alice"\ntenant_admin = "no"\n',
     "subjects[0].tenant_admin: expected true or false, got str 'no'"),
    ('[[subjects]]\nid = "alice"\ncredential = ["tok"]\n',
     "subjects[0]: unknown key 'credential'; one of id, tenant, credentials, revoked, tenant_admin, roles, "
     "grants"),
    ('[[subjects]]\nid = "a"\n[[subjects]]\nid = "a"\n',
     "subjects[1].id: duplicate subject 'a' (subjects[0] already adds it)"),
    ('[[subjects]]\nid = "alice"\n[[subjects.grants]]\nscope = {project_id = "p"}\n'
     'capabilities = [["memory_read"]]\n',
     "subjects[0].grants[0]: capabilities must be a list of "
     "memory_read, memory_checkpoint, memory_write, tenant_admin"),
    ('[[journals]]\ntenant = ["x"]\nscope = {project_id = "p"}\n',
     "journals[0].tenant: expected a non-empty string, got list ['x']"),
    ('[[journals]]\nscope = {project_id = "p"}\nchanges = true\n',
     "journals[0]: changes must be an integer 0-100000"),
    ('[[journals]]\nscope = {project_id = "p"}\nchanges = 1000000000\n',       # appended for ever at start-up
     "journals[0]: changes must be an integer 0-100000"),
    ('[[subjects]]\nid = "alice"\nroles = ["admin"]\n',
     "subjects[0].roles: unknown role 'admin'; one of operator, inject_faults"),
    # dev's credential given to alice: dev's requests got 403 while the banner still said credential 'dev'
    ('[[subjects]]\nid = "alice"\ncredentials = ["dev"]\n',
     "subjects[0].credentials: credential 'dev' already belongs to subject 'dev'"),
    ('[[subjects]]\nid = "a"\ncredentials = ["t"]\n[[subjects]]\nid = "b"\nrevoked = ["t"]\n',
     "subjects[1].revoked: credential 't' already belongs to subject 'a'"),
])
def test_wrong_type_in_config_is_one_line_naming_file_and_key(tmp_path, capsys, text, message):
    cfg = tmp_path / "serve.toml"
    cfg.write_text(text)
    assert main(["serve", "--config", str(cfg), "--port", "0"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == f"simkit: {cfg}: {message}\n"


def test_credential_flag_cannot_take_a_credential_from_its_subject(capsys):
    assert main(["serve", "--credential", "dev=bob", "--port", "0"]) == 2
    err = capsys.readouterr().err
    assert err == "simkit: --credential 'dev=bob': credential 'dev' already belongs to subject 'dev'\n"


def test_config_cannot_add_dev_a_second_time(tmp_path):
    """A subject added twice is an error, dev included: add_subject kept
    the first, so this tenant and tenant_admin were silently ignored.
    (build_service, not main: a config that loads would start a server.)"""
    from simkit.service.config import ServiceConfigError
    cfg = tmp_path / "serve.toml"
    cfg.write_text('[[subjects]]\nid = "dev"\ntenant = "acme"\ntenant_admin = true\n')
    with pytest.raises(ServiceConfigError) as exc:
        build_service(config=str(cfg))
    assert str(exc.value) == (f"{cfg}: subjects[0].id: duplicate subject 'dev' "
                              "(simkit serve already has it; extend it with --credential or --grant)")


def test_a_subject_may_list_its_own_credential_again(tmp_path):
    """dev is extended with flags (a [[subjects]] entry for it is a duplicate subject)."""
    cfg = tmp_path / "serve.toml"
    cfg.write_text('[[subjects]]\nid = "alice"\ncredentials = ["a", "a-2"]\nrevoked = ["a-2"]\n')
    svc, _ = build_service(config=str(cfg), credentials=["dev=dev", "dev-2=dev", "a-3=alice"])
    assert svc.credentials["dev"] == svc.credentials["dev-2"] == "dev"
    assert svc.credentials["a"] == svc.credentials["a-2"] == svc.credentials["a-3"] == "alice"


def test_unknown_route_and_wrong_method_answer_the_service_error_body():
    """Not the framework's {"detail": ...}: the documented {"error": {status, code, message}}, no-store."""
    from simkit.service.config import dev_service
    from simkit.service.http import create_app, running
    svc = dev_service()
    svc.add_subject("ops", credentials=["ops"], roles=["operator"])
    with running(create_app(svc, admin=True)) as url, httpx.Client(base_url=url, timeout=10) as c:
        missing = c.post("/api/v1/memory/nope", json={})
        assert missing.status_code == 404 and missing.headers["cache-control"] == "no-store"
        assert missing.json() == {
            "error": {
                "status": 404,
                "code": "route_not_found",
                "message": "no route POST /api/v1/memory/nope; the routes are POST "
                "/api/v1/memory/changes, POST /api/v1/memory/checkpoints, "
                "POST /api/v1/memory/checkpoints/read, POST /api/v1/memory/query, "
                "POST /_simkit/append, POST /_simkit/backup, POST /_simkit/restore",
            }
        }
        wrong = c.get("/api/v1/memory/changes")
        assert wrong.status_code == 405 and wrong.headers["cache-control"] == "no-store"
        assert wrong.headers["allow"] == "POST"
        assert wrong.json() == {"error": {"status": 405, "code": "method_not_allowed",
                                          "message": "GET /api/v1/memory/changes: method not allowed; use "
                                                     "POST"}}
        for path in ("/_simkit/append", "/_simkit/restore"):  # operator routes: bad JSON is a 400, not a 500
            bad = c.post(path, content=b"{", headers={"Authorization": "Bearer ops",
                                                      "Content-Type": "application/json"})
            assert bad.status_code == 400 and bad.headers["cache-control"] == "no-store"
            assert bad.json()["error"]["code"] == "malformed_json"


@pytest.mark.parametrize("path", ["/_simkit/append", "/_simkit/restore"])
def test_operator_routes_parse_the_body_as_the_contract_does(path):
    """contract.parse_body: a JSON list was a 400 "'list' object has no attribute 'get'" and a body over 64
    KiB was appended; now the contract's malformed_json and 413, in its error body."""
    from simkit.service.config import dev_service
    from simkit.service.contract import MAX_REQUEST_BYTES
    from simkit.service.http import create_app, running
    svc = dev_service()
    svc.add_subject("ops", credentials=["ops"], roles=["operator"])
    journal = svc.journals[("tenant", tuple(DEV_SCOPE.values()))]
    with running(create_app(svc, admin=True)) as url, \
            httpx.Client(base_url=url, timeout=10, headers={"Authorization": "Bearer ops",
                                                          "Content-Type": "application/json"}) as c:
        listed = c.post(path, content=b"[]")
        assert listed.status_code == 400 and listed.json() == {"error": {
            "status": 400, "code": "malformed_json", "message": "request body must be a JSON object"}}
        big = c.post(path, content=json.dumps({"record_id": "x" * MAX_REQUEST_BYTES}).encode())
        assert big.status_code == 413 and big.headers["cache-control"] == "no-store"
        assert big.json()["error"]["code"] == "request_too_large"
    assert journal.head == 5                                             # the 413 appended nothing


def test_any_other_framework_http_error_answers_the_service_error_body():
    """The ``http_error`` branch of _route_errors: status,
    detail and headers kept, body and no-store the service's."""
    from starlette.exceptions import HTTPException

    from simkit.service.config import dev_service
    from simkit.service.http import create_app, running
    app = create_app(dev_service())

    @app.get("/teapot")
    def teapot():
        raise HTTPException(418, "short and stout", headers={"X-Pot": "tea"})

    with running(app) as url, httpx.Client(base_url=url, timeout=10) as c:
        r = c.get("/teapot")
    assert r.status_code == 418 and r.headers["cache-control"] == "no-store" and r.headers["x-pot"] == "tea"
    assert r.json() == {"error": {"status": 418, "code": "http_error", "message": "short and stout"}}


def test_the_config_format_documented_in_config_py_is_accepted_as_written(tmp_path):
    """The module docstring is the format's reference: its
    example must load, faults at the top level included."""
    import textwrap

    from simkit.service import config
    example = textwrap.dedent(config.__doc__.split("::\n", 1)[1].split("\n\nA credential belongs")[0])
    path = tmp_path / "serve.toml"
    path.write_text(example)
    svc, faults = config.build_service(config=str(path))
    assert [f"{f.kind}@{f.route}#{f.nth}" for f in faults] == ["lose-reply@write#2"]


@pytest.mark.parametrize("call, param", [
    (lambda: build_service(store="nope"), "store"),
    (lambda: build_service(grants=["bob"]), "grants"),
    (lambda: build_service(credentials=["dev"]), "credentials"),
    (lambda: build_service(faults=["melt"]), "faults"),
    (lambda: build_service(operator="two words"), "operator"),
])
def test_library_errors_name_the_parameter(call, param):
    """A library function's error names its parameter (issue 17), never a command-line flag."""
    from simkit.service.config import ServiceConfigError
    with pytest.raises(ServiceConfigError) as exc:
        call()
    assert exc.value.param == param and str(exc.value).startswith(f"{param} ") and "--" not in str(exc.value)


def test_run_service_scenario_names_its_parameters():
    from simkit.service.config import ServiceConfigError
    from simkit.service.sim import run_service_scenario
    with pytest.raises(ServiceConfigError, match=r"^version 3: "):
        run_service_scenario(version=3)
    with pytest.raises(ServiceConfigError, match=r"^store 'nope': "):
        run_service_scenario(store="nope")


@pytest.mark.parametrize("argv, err", [
    (["serve", "--store", "nope"], "--store 'nope': one of batched, split, split_receipt_first"),
    (["serve", "--fault", "melt"], "--fault 'melt': unknown fault 'melt'; one of lose-reply, "
                                   "corrupt-checkpoint, corrupt-journal, crash-mid-write"),
    (["serve", "--grant", "bob"], "--grant 'bob': expected SUBJECT=CAP[,CAP...][@SCOPE_JSON] with CAP one of "
                                  "memory_read, memory_checkpoint, memory_write, tenant_admin"),
    (["serve", "--operator", "two words"], "--operator 'two words': a credential is one token without "
                                           "spaces or control characters"),
    (["service", "checkpoint_service", "--version", "3"],
     "--contract-version 3: the contract versions are 1 and 2"),
    (["service", "checkpoint_service", "--contract-version", "3"],
     "--contract-version 3: the contract versions are 1 and 2"),
    (["serve", "--grant", "dev=memory_read@{bad"], "--grant 'dev=memory_read@{bad': scope is not JSON"),
    (["serve", "--grant", "nobody=memory_read"],
     "--grant 'nobody=memory_read': unknown subject 'nobody'; give it "
     "a credential first"),
    (["serve", "--grant", 'dev=memory_read@{"zzz":1}'],
     "--grant 'dev=memory_read@{\"zzz\":1}': scope: unknown field "
     "'zzz'"),
])
def test_the_cli_names_its_flags(capsys, argv, err):
    assert main(argv + (["--port", "0"] if argv[0] == "serve" else [])) == 2
    assert capsys.readouterr().err == f"simkit: {err}\n"


# -- the audit's findings: bounds, shortened echoes, credentials no client could present ---------------------
@pytest.fixture
def no_server(monkeypatch):
    """``simkit serve`` input that used to be accepted would start a server and block: fail instead."""
    from simkit.service import http
    monkeypatch.setattr(http, "serve", lambda *args, **kwargs: pytest.fail("simkit serve started a server"))


@pytest.mark.parametrize("flags, err", [
    (["--max-crashes", "1000"], "--max-crashes 1000: at most 50, as in simkit explore (schedules grow as "
                                "occurrences ** K)"),
    (["--max-crashes", "51"], "--max-crashes 51: at most 50, as in simkit explore (schedules grow as "
                              "occurrences ** K)"),
    (["--lost-responses", "99999"], "--lost-responses 99999: at most 50, as in simkit explore (schedules "
                                    "grow as occurrences ** L)"),
    (["--max-crashes", "-1"], "--max-crashes -1: must be a whole number, at least 0"),
    (["--horizon", "-1"], "--horizon -1: must be a whole number, at least 0"),
])
def test_service_explore_bounds_are_simkit_explores(capsys, flags, err):
    """``--max-crashes 1000`` and ``--lost-responses 99999``
    were accepted (``simkit explore`` caps both at 50)."""
    assert main(["service", "checkpoint_service", "--explore", *flags]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == f"simkit: {err}\n"


@pytest.mark.parametrize("flags", [["--max-crashes", "1"], ["--lost-responses", "0"], ["--horizon", "2"],
                                   ["--budget", "5"], ["--with-scenario-faults"]])
def test_an_option_of_explore_without_explore_is_refused(capsys, flags):
    """``service SCENARIO --budget 5`` (or any option that bounds ``--explore``) without ``--explore`` ran the
    scenario and ignored it without a word."""
    assert main(["service", "checkpoint_service", *flags]) == 2
    captured = capsys.readouterr()
    said = f"simkit: {flags[0]}: only with --explore, whose schedules it bounds\n"
    assert (captured.out, captured.err) == ("", said)


def test_service_explore_with_a_huge_horizon_allocates_nothing_up_front():
    """``--horizon 99999999999`` listed every (point, occurrence) before the first run and grew to 8 GB; now
    the schedules are made as they run. Under a 1 GiB address-space limit, the first three run at once."""
    code = ("import resource; resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))\n"
            "from simkit.service.sim import explore_service\n"
            "runs = explore_service('checkpoint_service', 'correct', None, 2, 1, 99999999999)\n"
            "print([next(runs).verdict.ok for _ in range(3)])\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout) == (0, "[True, True, True]\n"), done.stderr[-500:]


def test_service_explore_keeps_no_run_once_counted():
    """The command line listed every run before counting them: memory grew with the number of schedules."""
    import gc
    import weakref
    from types import SimpleNamespace

    from simkit.service.cli import _tally

    class Run:
        def __init__(self, ok):
            self.verdict = SimpleNamespace(ok=ok, as_dict=lambda: {"ok": ok})
            self.world = SimpleNamespace(sc=SimpleNamespace(crashes=((1, "p", 1),), lost_writes=()))

    alive = []

    def runs():
        for ok in (True, False, True, False):
            run = Run(ok)
            alive.append(weakref.ref(run))
            yield run
            del run
            gc.collect()
            assert [ref() for ref in alive[:-1]] == [None] * (len(alive) - 1)      # every earlier run is gone

    assert _tally("c", runs()) == {"client": "c", "runs": 4, "failing": 2, "first_failing": {
        "crashes": [[1, "p", 1]], "lost_writes": [], "ok": False}}


def test_service_explore_makes_the_same_schedules_in_the_same_order():
    """The lazy schedules are :func:`itertools.combinations` of the old lists, in their order."""
    import itertools

    from simkit.service import sim
    sc = sim.scenario("checkpoint_service")
    points = [(1, p, n) for p in sim.CRASH_POINTS for n in (1, 2, 3)]
    losses = [(1, n) for n in (1, 2, 3) if (1, n) not in sc.lost_writes]
    pool = sim._Occurrences(tuple((p,) for p in sim.CRASH_POINTS), 3,
                            ((1, sim.CRASH_POINTS[1], 2), (2, "x", 1)))
    assert [pool[i] for i in range(len(pool))] == [p for p in points if p != (1, sim.CRASH_POINTS[1], 2)]
    lost = sim._Occurrences(((),), 3, sc.lost_writes)
    for k in range(4):
        assert list(sim._combinations(lost, k)) == list(itertools.combinations(losses, k))
        assert list(sim._combinations(pool, k)) == list(
            itertools.combinations([pool[i] for i in range(len(pool))], k)
        )


@pytest.mark.parametrize("scope, problem", [
    ("[" * 3000, "scope nests arrays or objects too deeply to read (a scope is one flat object)"),
    ("[" * 100 + "]" * 100, "scope must be a JSON object"),
    ('{"project_id": "' + "p" * 5000 + '"}', "scope: missing field 'mission_id'"),
], ids=["3000-levels", "100-levels", "long"])
def test_a_bad_grant_scope_is_one_short_line(capsys, no_server, scope, problem):
    """``--grant dev=memory_read@[[[…`` (3,000 levels) was a RecursionError traceback; 100 levels were echoed
    whole in the error line."""
    assert main(["serve", "--port", "0", "--grant", f"dev=memory_read@{scope}"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.startswith("simkit: --grant 'dev=memory_read@")
    assert captured.err.count("\n") == 1 and len(captured.err) < 250, captured.err
    assert captured.err.endswith(f": {problem}\n"), captured.err


@pytest.mark.parametrize("argv, err", [
    (["--operator", ""], "--operator '': a credential is one token without spaces or control characters"),
    (["--operator", " "], "--operator ' ': a credential is one token without spaces or control characters"),
    (["--credential", " =bob"], "--credential ' =bob': a credential is one token without spaces or control "
                                "characters"),
    (["--credential", "two words=bob"], "--credential 'two words=bob': a credential is one token without "
                                        "spaces or control characters"),
    (["--credential", "é=bob"], "--credential 'é=bob': a credential is ASCII (an Authorization header "
                                "carries no other characters as sent)"),
    (["--operator", "op-é"], "--operator 'op-é': a credential is ASCII (an Authorization header carries "
                             "no other characters as sent)"),
])
def test_a_credential_no_client_could_present_is_refused_at_start_up(capsys, no_server, argv, err):
    """A blank token, or one with spaces or non-ASCII characters, can never authenticate (the header loses the
    spaces; the server reads it as Latin-1): ``--credential ' =bob'`` and ``'é=bob'`` started a server whose
    subject could never call it. (``--operator ''`` was already refused; kept here as the audit's case.)"""
    assert main(["serve", "--port", "0", *argv]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == f"simkit: {err}\n"


@pytest.mark.parametrize("credentials", ['[" "]', '["two words"]', '["tok\\u00e9"]', '["ok", "\\ttab"]'])
def test_a_config_credential_no_client_could_present_is_refused(tmp_path, capsys, no_server, credentials):
    """An operator whose only credential is blank started the server with the operator routes on, and nobody
    could ever call them."""
    cfg = tmp_path / "serve.toml"
    cfg.write_text(f'[[subjects]]\nid = "ops"\ncredentials = {credentials}\nroles = ["operator"]\n')
    assert main(["serve", "--port", "0", "--config", str(cfg)]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.startswith(f"simkit: {cfg}: subjects[0].credentials[")
    assert captured.err.count("\n") == 1 and "a credential is " in captured.err


@pytest.mark.parametrize("fault, err", [
    ("corrupt-journal@query", "corrupt-journal cannot strike @query; it applies to @changes only"),
    ("corrupt-journal@write", "corrupt-journal cannot strike @write; it applies to @changes only"),
    ("corrupt-checkpoint@changes", "corrupt-checkpoint cannot strike @changes; it applies to @read or @write "
                                   "only"),
    ("corrupt-checkpoint@query#2", "corrupt-checkpoint cannot strike @query; it applies to @read or @write "
                                   "only"),
    ("crash-mid-write@read", "crash-mid-write cannot strike @read; it applies to @write only"),
])
def test_a_start_up_fault_its_route_cannot_honour_is_refused(capsys, no_server, fault, err):
    """``--fault corrupt-journal@query`` started, and the fault was silently never injected."""
    assert main(["serve", "--port", "0", "--fault", fault]) == 2
    assert capsys.readouterr().err == f"simkit: --fault {fault!r}: {err}\n"
