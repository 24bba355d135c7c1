mod admission;
mod conversion;
mod server;
mod support;
