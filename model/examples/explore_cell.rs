//! Time one exhaustive search, for profiling:
//! `explore_cell PROFILE TRANSPORT CLIENT KEY SERVER CALLS RETRIES CRASHES`.
use mcp_once_model::*;
fn main() {
    let a: Vec<String> = std::env::args().skip(1).collect();
    let config = Config {
        profile: a[0].clone(),
        transport: a[1].parse().unwrap(),
        client: a[2].parse().unwrap(),
        key: a[3].parse().unwrap(),
        server: a[4].parse().unwrap(),
        cancel: None,
        handler: Default::default(),
        deployment: Default::default(),
        bounds: Bounds { calls: a[5].parse().unwrap(), retries: a[6].parse().unwrap(), crashes: a[7].parse().unwrap() },
    };
    let m = McpModel::new(config, Profile::load(&a[0]).unwrap()).unwrap();
    // FULL=1: every reduction off; FIRST_VIEW=1: the first release's view (no lean view).
    let m = if std::env::var_os("FULL").is_some() { m.without_reductions() } else { m };
    let m =
        if std::env::var_os("FIRST_VIEW").is_some() { m.with_view(state::View { lean: false, ..m.view }) } else { m };
    let t = std::time::Instant::now();
    // LENGTHS=1: only the lengths, by the search that keeps no paths (less memory).
    if std::env::var_os("LENGTHS").is_some() {
        let l = shortest_lengths(&m, PropertyKind::ALL, usize::MAX);
        println!("{l:?} {:.2}s", t.elapsed().as_secs_f64());
        return;
    }
    let e = explore(&m, PropertyKind::ALL);
    let lens: Vec<_> = e.results.iter().map(|r| r.counterexample.as_ref().map(|c| c.len())).collect();
    println!("{:?} {:?} worst {} {:.2}s", e.stats, lens, e.worst.effects, t.elapsed().as_secs_f64());
}
