@name t
@default_scope subset
pass ^ok$
field ^x (?<new_ms>\d+) (?<B>\d+)
env ^M: (?<fields>.*)
env.label ^(?<branch>\w+)@(?<sha>\w+)$
