pub struct Args {
    pub dir: String,
    pub port: u16,
}

/// Parses the command line arguments: `[--port N] DIR`.
pub fn parse_args(mut it: impl Iterator<Item = String>) -> Result<Args, String> {
    let mut port = 8080;
    let mut dir = None;
    while let Some(a) = it.next() {
        match a.as_str() {
            "--port" => {
                let v = it.next().ok_or("--port needs a value")?;
                port = v.parse().map_err(|_| format!("bad port {v}"))?;
            }
            _ => dir = Some(a),
        }
    }
    Ok(Args { dir: dir.ok_or("missing DIR")?, port })
}
