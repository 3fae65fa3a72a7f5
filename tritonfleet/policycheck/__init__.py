"""Run the tritonfleet policy pack against an offline plan, the way `pulumi preview --policy-pack` does.

`engine.run_pack` starts the real pack process and speaks the Analyzer gRPC protocol to it; `direct.run_direct`
calls the same policies' validate functions in this process. `check` runs both and says whether they agree.
"""
