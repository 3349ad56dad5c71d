//! Task-augmented `tools/call` (`--tasks augmented`, profile knob `task_creation`): the server
//! answers with a `CreateTaskResult` naming a task whose id it generated (2025-11-25
//! `basic/utilities/tasks.mdx`; 2026-07-28, SEP-2663), and the effect runs in the task. A
//! client that lost the `CreateTaskResult` has no task id to poll; a retry creates a second task
//! and a second effect. A server that returns the `CreateTaskResult` of a task kept in memory
//! breaks SEP-2663's MUST NOT at that step.

use mcp_once_model::conformance::{self, breaches_at, Breach, Keyword};
use mcp_once_model::*;
use stateright::Model;

fn model(profile: &str, client: ClientPolicy, key: KeyLifetime, server: ServerImpl, records: TaskRecords) -> McpModel {
    let config = Config::builder(profile)
        .transport(Transport::Http)
        .client(client)
        .key(key)
        .server(server)
        .tasks(Tasks::Augmented)
        .task_records(records)
        .bounds(Bounds { calls: 1, retries: 1, crashes: 0 })
        .build();
    McpModel::new(config, Profile::load(profile).unwrap()).unwrap()
}

fn with_crashes(m: &McpModel, crashes: u8) -> McpModel {
    let config = Config { bounds: Bounds { crashes, ..m.config.bounds }, ..m.config.clone() };
    McpModel::new(config, m.profile.clone()).unwrap()
}

fn shortest(m: &McpModel, p: PropertyKind) -> Option<Counterexample> {
    check_property(m, p).counterexample
}

fn said(m: &McpModel, cex: &Counterexample, i: usize) -> String {
    rules::describe(m, &cex.states[i], &cex.actions[i], &cex.states[i + 1])
}

#[test]
fn a_lost_create_task_result_leaves_a_retry_that_runs_a_second_task() {
    let m = model("mcp-2025-11-25", ClientPolicy::RetryAny, KeyLifetime::None, ServerImpl::Plain, TaskRecords::Durable);
    let cex = shortest(&m, PropertyKind::AtMostOnce).expect("a duplicate task");
    // The call, the timeout, the retry, each request read (a task created for each, the first
    // one's CreateTaskResult unread) and each task's effect.
    assert_eq!(cex.actions.len(), 7, "{:?}", cex.actions);
    let step = |name: &str| cex.actions.iter().position(|a| a.name() == name).expect(name);
    let (timeout, retry) = (step("ClientTimeout"), step("ClientRetry"));
    assert!(timeout < retry);
    let created: Vec<String> = (0..cex.actions.len())
        .filter(|i| matches!(cex.actions[*i], Action::ServerReceive { .. }))
        .map(|i| said(&m, &cex, i))
        .collect();
    assert_eq!(created.len(), 2, "{created:?}");
    assert!(created.iter().all(|s| s.contains("answers CreateTaskResult")), "{created:?}");
    assert!(created[0].contains("t0.0") && created[0].contains("the CreateTaskResult is lost"), "{created:?}");
    assert!(created[1].contains("t0.1") && !created[1].contains("lost"), "{created:?}");
    let commits: Vec<u8> = cex
        .actions
        .iter()
        .filter_map(|a| match a {
            Action::ServerCommit { attempt, .. } => Some(*attempt),
            _ => None,
        })
        .collect();
    assert_eq!(commits, [0, 1], "one effect per task");
    assert_eq!(cex.states.last().unwrap().ledger[0], 2);
    // The client never read a task id: no ClientReceive at all.
    assert!(!cex.actions.iter().any(|a| a.name() == "ClientReceive"), "{:?}", cex.actions);
    // The same under the 2026-07-28 tasks extension with its durable records:
    // durability keeps the first task, not the client's knowledge of it.
    let durable =
        model("mcp-2026-07-28", ClientPolicy::RetryAny, KeyLifetime::None, ServerImpl::Plain, TaskRecords::Durable);
    assert_eq!(shortest(&durable, PropertyKind::AtMostOnce).map(|c| c.actions.len()), Some(7));
}

#[test]
fn a_client_that_read_the_create_task_result_polls_and_does_not_retry() {
    // A client that retries only after a timeout: once it holds the task id it no longer times
    // out, so every duplicate it makes comes from a CreateTaskResult it did not read.
    let m = model(
        "mcp-2025-11-25",
        ClientPolicy::RetryOnTimeout,
        KeyLifetime::None,
        ServerImpl::Plain,
        TaskRecords::Durable,
    );
    let cex = shortest(&m, PropertyKind::AtMostOnce).expect("violated by a lost CreateTaskResult");
    let retry = cex.actions.iter().position(|a| a.name() == "ClientRetry").expect("a retry");
    assert!(cex.states[retry].attempts[0].iter().all(|t| !t.task), "the client held a task id and retried");
    // A success read by polling: the handle first, then the completed task.
    let ok = shortest(&m, PropertyKind::SuccessImpliesEffect);
    assert!(ok.is_none(), "a success without an effect");
}

#[test]
fn no_retry_or_a_key_store_that_covers_the_retry_holds() {
    for crashes in [0, 1] {
        let none =
            model("mcp-2025-11-25", ClientPolicy::NoRetry, KeyLifetime::None, ServerImpl::Plain, TaskRecords::Durable);
        let none = with_crashes(&none, crashes);
        assert!(shortest(&none, PropertyKind::AtMostOnce).is_none(), "{}", none.config);
        // SEP-3182 under the tasks extension: the retry carries the call's key, and the key
        // store finds the first task's record (or its request still running) instead of
        // creating a second task.
        let keyed = model(
            "sep-3182",
            ClientPolicy::RetryAny,
            KeyLifetime::PerCall,
            ServerImpl::KeyDurable,
            TaskRecords::Durable,
        );
        let keyed = with_crashes(&keyed, crashes);
        assert!(shortest(&keyed, PropertyKind::AtMostOnce).is_none(), "{}", keyed.config);
    }
    // The same proposal's server with no key store covers nothing.
    let plain = model("sep-3182", ClientPolicy::RetryAny, KeyLifetime::None, ServerImpl::Plain, TaskRecords::Durable);
    assert!(shortest(&plain, PropertyKind::AtMostOnce).is_some(), "{}", plain.config);
}

#[test]
fn a_volatile_task_record_breaks_sep_2663_at_each_create_task_result() {
    let flagged = |m: &McpModel, cex: &Counterexample| -> Vec<(usize, Breach)> {
        (0..cex.actions.len())
            .flat_map(|i| breaches_at(m, &cex.states, &cex.actions, i).into_iter().map(move |b| (i, b)))
            .collect()
    };
    let volatile =
        model("mcp-2026-07-28", ClientPolicy::RetryAny, KeyLifetime::None, ServerImpl::Plain, TaskRecords::Volatile);
    let cex = shortest(&volatile, PropertyKind::AtMostOnce).expect("violated");
    let marks = flagged(&volatile, &cex);
    let receives: Vec<usize> =
        (0..cex.actions.len()).filter(|i| matches!(cex.actions[*i], Action::ServerReceive { .. })).collect();
    assert_eq!(marks.iter().map(|(i, _)| *i).collect::<Vec<_>>(), receives, "{marks:?}");
    for (_, b) in &marks {
        assert_eq!((b.knob, b.keyword), (KnobId::TaskCreation, Keyword::MustNot), "{b:?}");
        assert!(b.what.contains("in memory only"), "{}", b.what);
    }
    assert!(!conformance::server_breaches(&volatile.config, &volatile.profile).is_empty());
    let variants = conformance::conformant_variants(&volatile.config, &volatile.profile);
    assert_eq!(variants.iter().map(|c| c.task_records).collect::<Vec<_>>(), [TaskRecords::Durable]);
    // Durable records under the same profile, and volatile ones under 2025-11-25 (which says
    // nothing of when a task is durable), are flagged nowhere.
    for m in [
        model("mcp-2026-07-28", ClientPolicy::RetryAny, KeyLifetime::None, ServerImpl::Plain, TaskRecords::Durable),
        model("mcp-2025-11-25", ClientPolicy::RetryAny, KeyLifetime::None, ServerImpl::Plain, TaskRecords::Volatile),
    ] {
        let cex = shortest(&m, PropertyKind::AtMostOnce).expect("violated");
        assert!(flagged(&m, &cex).is_empty(), "{}", m.config);
        assert!(conformance::server_breaches(&m.config, &m.profile).is_empty(), "{}", m.config);
    }
}

#[test]
fn a_crash_loses_a_volatile_tasks_result_and_a_durable_one_keeps_it() {
    // The call, its task created and its id read by the client, the effect, the task completed,
    // then a crash and a restart: the client's next poll.
    let after_crash = |records| {
        let m = with_crashes(
            &model("mcp-2026-07-28", ClientPolicy::RetryAny, KeyLifetime::None, ServerImpl::Plain, records),
            1,
        );
        let mut s = m.init_states().remove(0);
        let steps = [
            Action::ClientCall { call: 0 },
            Action::ServerReceive { call: 0, attempt: 0, instance: 0 },
            Action::ClientReceive { call: 0, attempt: 0 },
            Action::ServerCommit { call: 0, attempt: 0 },
            Action::ServerRespond { call: 0, attempt: 0 },
            Action::ServerCrash { instance: 0 },
            Action::ServerRestart { instance: 0 },
        ];
        for a in steps {
            let mut offered = Vec::new();
            m.actions(&s, &mut offered);
            assert!(offered.contains(&a), "{a} not offered under {}", m.config);
            s = m.next_state(&s, a).unwrap();
        }
        assert!(s.attempts[0][0].task, "the client holds the task id");
        let mut offered = Vec::new();
        m.actions(&s, &mut offered);
        // Holding the task id, the client neither times out nor sees a stream break.
        assert!(!offered.iter().any(|a| matches!(a, Action::ClientTimeout { .. } | Action::StreamBreak { .. })));
        (m, s, offered)
    };
    let (_, _, offered) = after_crash(TaskRecords::Durable);
    assert!(offered.contains(&Action::ClientReceive { call: 0, attempt: 0 }), "{offered:?}");
    let (m, s, offered) = after_crash(TaskRecords::Volatile);
    let poll = Action::ClientSeesDisconnect { call: 0, attempt: 0 };
    assert!(offered.contains(&poll), "{offered:?}");
    let failed = m.next_state(&s, poll).unwrap();
    assert!(rules::describe(&m, &s, &poll, &failed).contains("finds no such task"));
    // A failed poll is an error answer: a retry-any client sends the call again, a second task.
    let mut offered = Vec::new();
    m.actions(&failed, &mut offered);
    assert!(offered.iter().any(|a| a.name() == "ClientRetry"), "{offered:?}");
}

#[test]
fn tasks_apply_where_the_profile_has_them_and_with_what_the_model_takes() {
    let why = |config: Config, profile: &Profile| config.applicable(profile).unwrap_err().to_string();
    let text = "name = \"no-tasks\"\ntitle = \"t\"\nkind = \"proposal\"\nrevision = \"2025-11-25\"\nextends = \"mcp-2025-11-25\"\n[knobs.task_creation]\nvalue = \"none\"\n[knobs.task_creation.cite]\nrevision = \"2025-11-25\"\npath = \"x\"\nsection = \"x\"\nquote = \"x\"\n";
    let none = Profile::parse("no-tasks.toml", text, None).unwrap();
    let cell = |profile: &str| Config::builder(profile).tasks(Tasks::Augmented);
    let w = why(cell("no-tasks").build(), &none);
    assert!(w.contains("task_creation = none"), "{w}");
    let p = Profile::load("mcp-2025-11-25").unwrap();
    assert!(cell("mcp-2025-11-25").build().applicable(&p).is_ok());
    let volatile_alone = Config::builder("mcp-2025-11-25").task_records(TaskRecords::Volatile).build();
    assert!(why(volatile_alone, &p).contains("needs --tasks augmented"));
    let q = Profile::load("outcome-query").unwrap();
    let validating = cell("outcome-query").key(KeyLifetime::PerCall).server(ServerImpl::ValidatesTaskId).build();
    assert!(why(validating, &q).contains("not modelled"));
    let rounds = cell("mcp-2026-07-28").handler(HandlerKind::InputAfterEffect).rounds(1).build();
    assert!(why(rounds, &Profile::load("mcp-2026-07-28").unwrap()).contains("not modelled"));
    // The flags round-trip through a cell's text and its file form.
    let c = cell("mcp-2026-07-28").task_records(TaskRecords::Volatile).build();
    assert!(c.to_string().contains("--tasks augmented --task-records volatile"), "{c}");
}

/// Assert that `m` and its unreduced model give every property the same verdict and shortest
/// counterexample length, and the same worst case.
fn assert_same_as_unreduced(m: &McpModel) {
    let full = m.without_reductions();
    let (ours, theirs) = (explore(m, PropertyKind::ALL), explore(&full, PropertyKind::ALL));
    for (a, b) in ours.results.iter().zip(&theirs.results) {
        let len = |r: &search::CheckResult| r.counterexample.as_ref().map(|c| c.actions.len());
        assert_eq!((a.verdict, len(a)), (b.verdict, len(b)), "{} under {}", a.property, m.config);
    }
    assert_eq!(ours.worst.effects, theirs.worst.effects, "worst case under {}", m.config);
}

/// The reductions change nothing on the tasks axis: every property's verdict and shortest
/// length, and the worst case, against the model with every reduction off, on every client,
/// the store-less and id-table servers (2025-11-25, both transports) and the key stores
/// (SEP-3182), both task records, with and without a crash.
#[test]
fn the_reductions_hold_on_the_tasks_axis() {
    let mut compared = 0;
    let cells = [
        ("mcp-2025-11-25", KeyLifetime::None, ServerImpl::Plain),
        ("mcp-2025-11-25", KeyLifetime::None, ServerImpl::DedupById),
        ("mcp-2025-11-25", KeyLifetime::None, ServerImpl::DedupByIdDurable),
        ("mcp-2026-07-28", KeyLifetime::None, ServerImpl::Plain),
        ("sep-3182", KeyLifetime::PerCall, ServerImpl::KeyDurable),
        ("sep-3182", KeyLifetime::PerCall, ServerImpl::KeyVolatile),
        ("sep-3182", KeyLifetime::PerCall, ServerImpl::KeyAfterEffect),
    ];
    for client in ClientPolicy::ALL {
        for (profile, key, server) in cells {
            for records in [TaskRecords::Durable, TaskRecords::Volatile] {
                for transport in [Transport::Http, Transport::Stdio] {
                    for crashes in [0, 1] {
                        let m = with_crashes(&model(profile, *client, key, server, records), crashes);
                        let config = Config { transport, ..m.config.clone() };
                        let Ok(m) = McpModel::new(config, m.profile.clone()) else { continue };
                        assert_same_as_unreduced(&m);
                        compared += 1;
                    }
                }
            }
        }
    }
    assert!(compared >= ClientPolicy::ALL.len() * 7 * 2 * 2, "{compared}");
}

/// Two calls, where the view puts started calls in a canonical order (a task id held is part of
/// its call): the same answers as the unreduced model on the retrying clients' cells.
#[test]
fn the_reductions_hold_on_two_calls_with_tasks() {
    for client in [ClientPolicy::RetryAny, ClientPolicy::RetryOnTimeout] {
        for (profile, key, server) in [
            ("mcp-2025-11-25", KeyLifetime::None, ServerImpl::Plain),
            ("mcp-2025-11-25", KeyLifetime::None, ServerImpl::DedupById),
            ("sep-3182", KeyLifetime::PerCall, ServerImpl::KeyDurable),
        ] {
            for records in [TaskRecords::Durable, TaskRecords::Volatile] {
                let m = model(profile, client, key, server, records);
                let config = Config { bounds: Bounds { calls: 2, retries: 1, crashes: 1 }, ..m.config.clone() };
                assert_same_as_unreduced(&McpModel::new(config, m.profile.clone()).unwrap());
            }
        }
    }
}
