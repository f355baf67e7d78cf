package dev.weft.lab;

/** The lab's endpoints are weft-upstream on 127.0.0.x: the dispatcher's target guard must let them through. */
final class LabTargets {
    static final String ALLOW_PRIVATE = ", allow_private: true";

    private LabTargets() {
    }
}
