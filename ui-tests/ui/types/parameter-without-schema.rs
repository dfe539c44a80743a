use tool_core::tool;

pub struct Point {
    pub x: i32,
    pub y: i32,
}

/// Measure a point.
#[tool(risk = "safe")]
fn norm(point: Point) -> i32 {
    point.x.abs() + point.y.abs()
}

fn main() {}
