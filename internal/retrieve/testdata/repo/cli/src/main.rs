mod parse_args;

fn main() {
    let args = parse_args::parse_args(std::env::args().skip(1)).unwrap_or_else(|e| {
        eprintln!("error: {e}");
        std::process::exit(2);
    });
    println!("serving {} on port {}", args.dir, args.port);
}
