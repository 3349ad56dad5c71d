//! Prints verdicts, trace lengths and worst cases for a few configurations (development aid).
use mcp_once_model::*;
use std::str::FromStr;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [profile, transport, client, key, server, calls, retries, crashes] = &args[..] else {
        eprintln!("usage: PROFILE TRANSPORT CLIENT KEY SERVER CALLS RETRIES CRASHES");
        std::process::exit(2);
    };
    let p = Profile::load(profile).unwrap();
    let cfg = Config {
        profile: profile.clone(),
        transport: Transport::from_str(transport).unwrap(),
        client: ClientPolicy::from_str(client).unwrap(),
        key: KeyLifetime::from_str(key).unwrap(),
        server: ServerImpl::from_str(server).unwrap(),
        bounds: Bounds { calls: calls.parse().unwrap(), retries: retries.parse().unwrap(), crashes: crashes.parse().unwrap() },
    };
    let m = McpModel::new(cfg, p, Check::Property(PropertyKind::AtMostOnce)).unwrap();
    for prop in PropertyKind::ALL {
        let r = check_property(&m, *prop);
        println!("{prop}: {:?} states={} gen={} depth={} {:.2}s len={:?}", r.verdict, r.stats.states, r.stats.generated, r.stats.depth, r.stats.seconds, r.counterexample.as_ref().map(|c| c.len()));
        if let Some(c) = &r.counterexample {
            for (i, a) in c.actions.iter().enumerate() {
                println!("   {}. {}", i + 1, mcp_once_model::rules::describe(&m, &c.states[i], a, &c.states[i + 1]));
            }
        }
    }
    let w = worst_case(&m);
    println!("worst: {} ({:.2}s, len {:?})", w.effects, w.stats.seconds, w.trace.as_ref().map(|t| t.len()));
    if let Some(c) = &w.trace {
        for (i, a) in c.actions.iter().enumerate() {
            println!("   {}. {}", i + 1, a);
        }
    }
}
