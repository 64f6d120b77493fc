:
	push   %r14
	mov    %rsi,%r14
	mov    %rdx,%rsi
	push   %r13
	push   %rbp
	mov    %rcx,%rbp
	push   %rbx
	mov    %rdi,%rbx
	sub    $,%rsp
	mov    (%rdi),%rcx
	test   %r8d,%r8d
	jne    
	test   %rcx,%rcx
	je     
	test   %rbp,%rbp
	je     
	mov    (%rbx),%rcx
	lea    -(%rcx),%rax
	test   %rcx,%rax
	je     
	mov    %rbp,%rax
	xor    %edx,%edx
	div    %rcx
	mov    %rax,%rcx
	add    $,%rsp
	lea    (%rbx),%rdi
	mov    %r14,%rdx
	pop    %rbx
	pop    %rbp
	pop    %r13
	pop    %r14
	jmp    
	cs nopw (%rax,%rax,1)
	mov    (%rdi),%eax
	xor    %r8d,%r8d
	test   %eax,%eax
	sete   %r8b
	test   %rcx,%rcx
	je     
	test   %rbp,%rbp
	je     
	test   %r8d,%r8d
	je     
	mov    (%rbx),%rax
	mov    %rbp,%rdx
	mov    (%rax),%r13
	add    (%rax),%r13
	add    $,%r13
	and    $,%r13
	add    (%rbx),%r13
	mov    %r13,%rdi
	call   
	mov    (%rbx),%rcx
	lea    -(%rcx),%rax
	test   %rcx,%rax
	jne    
	tzcnt  %rcx,%rcx
	mov    %rbp,%rax
	shr    %cl,%rax
	mov    %rax,%rcx
	lea    (%rbx),%rdi
	mov    %r13,%rdx
	mov    %r14,%rsi
	call   
	add    $,%rsp
	mov    %rbp,%rdx
	mov    %r13,%rsi
	pop    %rbx
	mov    %r14,%rdi
	pop    %rbp
	pop    %r13
	pop    %r14
	jmp    
	nopw   (%rax,%rax,1)
	mov    (%rbx),%rcx
	mov    %rsi,%rax
	xor    %edx,%edx
	div    %rcx
	test   %rdx,%rdx
	je     
	test   %rbp,%rbp
	je     
	mov    (%rbx),%rax
	mov    %rbp,%rdx
	mov    %r8d,(%rsp)
	mov    (%rax),%r13
	add    (%rax),%r13
	add    $,%r13
	and    $,%r13
	add    (%rbx),%r13
	mov    %r13,%rdi
	call   
	mov    (%rsp),%r8d
	test   %r8d,%r8d
	jne    
	mov    (%rbx),%rcx
	lea    -(%rcx),%rax
	test   %rcx,%rax
	jne    
	tzcnt  %rcx,%rcx
	shr    %cl,%rbp
	mov    %rbp,%rcx
	add    $,%rsp
	lea    (%rbx),%rdi
	mov    %r14,%rdx
	mov    %r13,%rsi
	pop    %rbx
	pop    %rbp
	pop    %r13
	pop    %r14
	jmp    
	nopl   (%rax)
	add    $,%rsp
	pop    %rbx
	pop    %rbp
	pop    %r13
	pop    %r14
	ret
	nopl   (%rax,%rax,1)
	tzcnt  %rcx,%rcx
	shr    %cl,%rbp
	mov    %rbp,%rcx
	jmp    
	mov    %r14,%rax
	xor    %edx,%edx
	div    %rcx
	test   %rdx,%rdx
	je     
	jmp    
	cs nopw (%rax,%rax,1)
	mov    %rbp,%rax
	xor    %edx,%edx
	div    %rcx
	mov    %rax,%rcx
	jmp    
	mov    %rbp,%rax
	xor    %edx,%edx
	div    %rcx
	mov    %rax,%rcx
	jmp    

