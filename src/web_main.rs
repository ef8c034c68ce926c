//! The web page's program: the viewer on the page's canvas (`skinview::viewer::web`). Built
//! for `wasm32-unknown-unknown` by `scripts/build-web.sh`; on other targets it only says so.

#[cfg(target_arch = "wasm32")]
fn main() {
    skinview::viewer::web::start();
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    #[allow(clippy::print_stderr)]
    {
        eprintln!(
            "skinview-web is the web page's program: build the page with scripts/build-web.sh \
             and serve it with scripts/serve-web.sh (the desktop viewer is `skinview view`)"
        );
    }
    std::process::exit(2);
}
