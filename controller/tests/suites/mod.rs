mod concurrency;
mod finalizers;
mod owners;
mod predicates;
mod requeue;
mod sync_and_shutdown;
mod writes;
