// Particle pictures (`varidem render`, src/render/pipeline.rs): every particle is a
// camera-facing square (two triangles, six vertices, one instance per particle) on which
// the fragment shader traces the sphere: it discards the corners, computes the sphere's
// normal and its true depth, and shades the particle's colour with ambient + Lambert
// light.
//
// Orthographic camera. View space: x to the right, y up, z away from the viewer, in
// metres, relative to the centre of the framed box.

struct Camera {
    // NDC units per metre along x and y (1 / half-width, 1 / half-height).
    scale: vec2<f32>,
    // Depth 0 at z = near, 1 at z = near + 1 / inv_depth_range.
    near: f32,
    inv_depth_range: f32,
    // View-space unit vector towards the light (xyz) and the ambient fraction (w).
    light: vec4<f32>,
};

@group(0) @binding(0) var<uniform> camera: Camera;

struct Instance {
    // Centre in view space.
    @location(0) center: vec3<f32>,
    @location(1) radius: f32,
    // Linear RGB (the sRGB target encodes it); alpha unused.
    @location(2) color: vec4<f32>,
};

struct VsOut {
    @builtin(position) clip: vec4<f32>,
    // Position on the square in units of the radius: the sphere is |corner| <= 1.
    @location(0) corner: vec2<f32>,
    @location(1) @interpolate(flat) color: vec3<f32>,
    // View-space z of the centre and the radius.
    @location(2) @interpolate(flat) z_radius: vec2<f32>,
};

fn depth_of(z: f32) -> f32 {
    return clamp((z - camera.near) * camera.inv_depth_range, 0.0, 1.0);
}

@vertex
fn vs_main(@builtin(vertex_index) vertex: u32, inst: Instance) -> VsOut {
    // A function-local copy: indexing with a runtime index needs an addressable array.
    var corners = array<vec2<f32>, 6>(
        vec2<f32>(-1.0, -1.0),
        vec2<f32>(1.0, -1.0),
        vec2<f32>(1.0, 1.0),
        vec2<f32>(-1.0, -1.0),
        vec2<f32>(1.0, 1.0),
        vec2<f32>(-1.0, 1.0),
    );
    let corner = corners[vertex];
    let xy = inst.center.xy + corner * inst.radius;
    var out: VsOut;
    // The square sits at the sphere's front; the fragment shader writes the exact depth.
    out.clip = vec4<f32>(xy * camera.scale, depth_of(inst.center.z - inst.radius), 1.0);
    out.corner = corner;
    out.color = inst.color.rgb;
    out.z_radius = vec2<f32>(inst.center.z, inst.radius);
    return out;
}

struct FsOut {
    @location(0) color: vec4<f32>,
    @builtin(frag_depth) depth: f32,
};

@fragment
fn fs_main(in: VsOut) -> FsOut {
    let r2 = dot(in.corner, in.corner);
    if r2 > 1.0 {
        discard;
    }
    // The visible hemisphere faces the viewer, i.e. -z.
    let nz = sqrt(1.0 - r2);
    let normal = vec3<f32>(in.corner.x, in.corner.y, -nz);
    let lambert = max(dot(normal, camera.light.xyz), 0.0);
    let ambient = camera.light.w;
    var out: FsOut;
    out.color = vec4<f32>(in.color * (ambient + (1.0 - ambient) * lambert), 1.0);
    out.depth = depth_of(in.z_radius.x - in.z_radius.y * nz);
    return out;
}

// Mesh walls: flat-shaded triangles drawn translucent over the spheres (so a closed
// container does not hide its contents), depth-tested against them but not writing
// depth. Colours are computed per triangle on the host (two-sided Lambert).

struct MeshVertex {
    // Position in view space.
    @location(0) position: vec3<f32>,
    // Linear RGB and opacity.
    @location(1) color: vec4<f32>,
};

struct MeshOut {
    @builtin(position) clip: vec4<f32>,
    @location(0) @interpolate(flat) color: vec4<f32>,
};

@vertex
fn vs_mesh(v: MeshVertex) -> MeshOut {
    var out: MeshOut;
    out.clip = vec4<f32>(v.position.xy * camera.scale, depth_of(v.position.z), 1.0);
    out.color = v.color;
    return out;
}

@fragment
fn fs_mesh(in: MeshOut) -> @location(0) vec4<f32> {
    return in.color;
}
