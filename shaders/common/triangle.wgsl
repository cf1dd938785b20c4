// The closest point of a triangle to a point and the feature it lies on: the twin of
// src/math/triangle.rs closest_point (Ericson, Real-Time Collision Detection, §5.1.5),
// the same operations in the same order. Features are numbered as the local part of a
// mesh feature key (physics::mesh::feature_key): 0 the face, 1 + k edge k (corner k to
// corner k + 1), 4 + k corner k.

struct Closest {
    q: vec3<real>,
    feature: u32,
}

fn closest_point(p: vec3<real>, a: vec3<real>, b: vec3<real>, c: vec3<real>) -> Closest {
    let ab = b - a;
    let ac = c - a;
    let ap = p - a;
    let d1 = dot(ab, ap);
    let d2 = dot(ac, ap);
    if (d1 <= 0.0 && d2 <= 0.0) {
        return Closest(a, 4u);
    }
    let bp = p - b;
    let d3 = dot(ab, bp);
    let d4 = dot(ac, bp);
    if (d3 >= 0.0 && d4 <= d3) {
        return Closest(b, 5u);
    }
    let vc = d1 * d4 - d3 * d2;
    if (vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0) {
        let v = d1 / (d1 - d3);
        return Closest(a + v * ab, 1u);
    }
    let cp = p - c;
    let d5 = dot(ab, cp);
    let d6 = dot(ac, cp);
    if (d6 >= 0.0 && d5 <= d6) {
        return Closest(c, 6u);
    }
    let vb = d5 * d2 - d1 * d6;
    if (vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0) {
        let w = d2 / (d2 - d6);
        return Closest(a + w * ac, 3u);
    }
    let va = d3 * d6 - d5 * d4;
    if (va <= 0.0 && d4 - d3 >= 0.0 && d5 - d6 >= 0.0) {
        let w = (d4 - d3) / ((d4 - d3) + (d5 - d6));
        return Closest(b + w * (c - b), 2u);
    }
    let denom = 1.0 / (va + vb + vc);
    let v = vb * denom;
    let w = vc * denom;
    return Closest(a + v * ab + w * ac, 0u);
}
