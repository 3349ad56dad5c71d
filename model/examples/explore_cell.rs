//! Time one exhaustive search, for profiling:
//! `explore_cell PROFILE TRANSPORT CLIENT KEY SERVER CALLS RETRIES CRASHES`.
use mcp_once_model::*;
fn main() {
    let a: Vec<String> = std::env::args().skip(1).collect();
    let n = |i: usize| a[i].parse::<u8>().unwrap();
    let config = Config::builder(&a[0])
        .transport(a[1].parse::<Transport>().unwrap())
        .client(a[2].parse::<ClientPolicy>().unwrap())
        .key(a[3].parse::<KeyLifetime>().unwrap())
        .server(a[4].parse::<ServerImpl>().unwrap())
        .bounds(Bounds { calls: n(5), retries: n(6), crashes: n(7) })
        .build();
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
