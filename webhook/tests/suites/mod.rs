mod admission;
mod conversion;
mod manager;
mod server;
mod support;
